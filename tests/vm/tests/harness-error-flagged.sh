# Harness self-test: an hcache message at error level that the test did not
# declare must fail it. The message is written to /dev/kmsg at level 3 as
# the module would print it; "expect-flagged" makes this pass only if the
# log scanner flagged it.
# timeout: 60
# one-kernel: a test of the harness's log scanner, not of a kernel
# expect-flagged: hcache: harness self-test error

echo "<3>hcache: harness self-test error" >/dev/kmsg
