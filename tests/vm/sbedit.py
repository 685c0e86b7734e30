#!/usr/bin/env python3
"""sbedit.py DEV FIELD=VALUE...: rewrite fields of the hcache superblock on
DEV (a device or image file) and fix its checksum, so VM tests can make the
superblocks a storage engineer meets in the field: another state, a newer
version, unknown feature bits, a bad checksum (csum=bad keeps the wrong one).

Offsets follow drivers/md/hcache/hcache_ondisk.h (struct hc_sb_disk).
"""
import struct
import sys

SB_OFFSET = 4096
SB_SIZE = 4096
# name: (offset, struct format)
FIELDS = {
    "magic": (0, "<Q"), "csum": (8, "<I"), "version": (12, "<I"),
    "compat": (16, "<Q"), "ro_compat": (24, "<Q"), "incompat": (32, "<Q"),
    "seq": (104, "<Q"), "sb_sector": (112, "<Q"), "flags": (120, "<Q"),
    "kind": (128, "<I"), "block_size": (132, "<I"),
    "data_offset": (136, "<Q"), "inval_gen": (144, "<I"),
}
BYTE_FIELDS = {"dev_uuid": (40, 16), "set_uuid": (56, 16), "label": (72, 32)}


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def main():
    dev, edits = sys.argv[1], sys.argv[2:]
    with open(dev, "r+b", buffering=0) as f:
        f.seek(SB_OFFSET)
        sb = bytearray(f.read(SB_SIZE))
        bad_csum = False
        for edit in edits:
            name, value = edit.split("=", 1)
            if name == "csum" and value == "bad":
                bad_csum = True
            elif name in FIELDS:
                off, fmt = FIELDS[name]
                struct.pack_into(fmt, sb, off, int(value, 0))
            elif name in BYTE_FIELDS:
                off, size = BYTE_FIELDS[name]
                raw = bytes.fromhex(value.replace("-", "")) if name.endswith("uuid") \
                    else value.encode()
                sb[off:off + size] = raw.ljust(size, b"\0")[:size]
            else:
                sys.exit("sbedit: unknown field " + name)
        struct.pack_into("<I", sb, 8, 0)
        csum = crc32c(bytes(sb))
        struct.pack_into("<I", sb, 8, csum ^ 1 if bad_csum else csum)
        f.seek(SB_OFFSET)
        f.write(sb)
        import os
        os.fsync(f.fileno())


if __name__ == "__main__":
    main()
