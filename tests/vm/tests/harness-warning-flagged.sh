# Harness self-test: a kernel WARNING during a test must fail it. The test
# itself succeeds, so only the log scanner can catch the warning;
# "expect-flagged" turns that around: this passes only if the scanner
# flagged the warning (and nothing else).
# timeout: 60
# one-kernel: a test of the harness's log scanner, not of a kernel
# expect-flagged: WARNING: .*hc_selftest

[ -f "$HC_SELFTEST_KO" ] || hc_fail "$HC_SELFTEST_KO is not built"
insmod "$HC_SELFTEST_KO" warn=1
rmmod hc_selftest
