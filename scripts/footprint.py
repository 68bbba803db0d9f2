#!/usr/bin/env python3
"""The firmware's flash footprint per feature set, from its linker map, checked against budgets.

  footprint.py MAP [--budget SET=BYTES ...] [--ceiling SET=BYTES ...] [--markdown]

Every input section the linker kept (.text*, .rodata*, .data*: what flash holds) is attributed
to the object it came from, and each object to one feature group:
  core         the SDK's histogram, sketch, noise, ledger, wire codec and Client, AES/SHA-256/
               CTR_DRBG (the seeded streams and the CSPRNG), nanopb, and the C runtime (libc,
               libm, libgcc) any image needs
  trainer      quantise, the rotation, the logistic trainer, the model-update and heterogeneity
               tasks
  secagg       secure aggregation and its crypto (bignum, X25519, HKDF, GCM, the cipher layer,
               mbedTLS's pool allocator)
  tls          mbedTLS's TLS client (ssl_*, ChaCha20-Poly1305, ECDH) and the device TLS channel
  application  the firmware's own code and semihosting (not in any feature set)
The feature sets of issue 14 are cumulative: core; + trainer; + secagg ("everything but TLS");
+ tls ("everything with TLS"). A set over its budget fails (exit 1, naming the set), unless a
ceiling is given for it: then it fails only above the ceiling (a set known to be over budget may
not grow). Prints one line per set.
"""
import argparse
import re
import sys

GROUPS = [
    ('tls', ('ssl_', 'chacha20', 'poly1305', 'chachapoly', 'ecdh.c', 'tls_channel')),
    ('secagg', ('secagg', 'shamir', 'mask.cpp', 'crypto_exchange', 'bignum', 'ecp.c',
                'ecp_curves', 'gcm.c', 'hkdf', 'cipher.c', 'cipher_wrap', '(md.c', 'md5',
                'memory_buffer_alloc')),
    ('trainer', ('quantise', 'rotation', 'logistic_trainer', 'model_update', 'heterogeneity')),
    ('application', ('main.cpp', 'provisioning', 'ledger_clock', 'stack_paint', 'startup_',
                     'cmsdk_uart', 'rdimon', 'semihosting')),
]
SETS = [('core', ('core',)), ('core+trainer', ('core', 'trainer')),
        ('everything but TLS', ('core', 'trainer', 'secagg')),
        ('everything with TLS', ('core', 'trainer', 'secagg', 'tls'))]
SECTION = re.compile(r'^ \.(?:text|rodata|data)\S*\s*\n?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)',
                     re.M)


def group_of(obj):
    for name, keys in GROUPS:
        if any(k in obj for k in keys):
            return name
    return 'core'


def sizes(map_text):
    text = map_text[map_text.index('Linker script and memory map'):]
    groups = {}
    for m in SECTION.finditer(text):
        address, size, obj = int(m.group(1), 16), int(m.group(2), 16), m.group(3)
        if address == 0 or size == 0:  # discarded or empty
            continue
        obj = obj.rsplit('/', 1)[-1]
        groups[group_of(obj)] = groups.get(group_of(obj), 0) + size
    return groups


def parse_pairs(pairs):
    out = {}
    for pair in pairs or []:
        name, value = pair.rsplit('=', 1)
        out[name] = int(value)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('map')
    parser.add_argument('--budget', action='append')
    parser.add_argument('--ceiling', action='append')
    args = parser.parse_args()
    budgets, ceilings = parse_pairs(args.budget), parse_pairs(args.ceiling)
    groups = sizes(open(args.map).read())
    print('footprint by group (flash bytes): ' +
          ', '.join(f'{g} {groups.get(g, 0)}' for g in
                    ('core', 'trainer', 'secagg', 'tls', 'application')))
    failed = False
    for name, members in SETS:
        total = sum(groups.get(g, 0) for g in members)
        budget = budgets.get(name)
        line = f'footprint: {name}: {total} bytes ({total / 1024:.1f} KiB) of flash'
        if budget is not None:
            line += f', budget {budget // 1024} KiB'
            if total > budget:
                ceiling = ceilings.get(name)
                if ceiling is None or total > ceiling:
                    line += ' -- OVER BUDGET' + (f' and above its ceiling {ceiling}' if ceiling
                                                 else '')
                    failed = True
                else:
                    line += f' -- over budget (known; ceiling {ceiling} bytes)'
        print(line)
    if failed:
        print('footprint: a feature set is over its budget (above)', file=sys.stderr)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
