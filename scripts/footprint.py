#!/usr/bin/env python3
"""The firmware's flash footprint per feature set, from its linker map, checked against budgets.

  footprint.py MAP [--map-for SET=MAP ...] [--budget SET=BYTES ...] [--ceiling SET=BYTES ...]

Every input section the linker kept (.text*, .rodata*, .data*: what flash holds) is attributed
to the object it came from, and each object to one feature group:
  core         the SDK's histogram, sketch, noise, ledger, wire codec and Client, AES and
               CTR_DRBG (the seeded streams and the CSPRNG), nanopb, and the C runtime (libc,
               libm, libgcc) any image needs
  trainer      quantise, the rotation, the logistic trainer, the model-update and heterogeneity
               tasks
  secagg       secure aggregation and its crypto (bignum and its constant-time helpers, X25519,
               SHA-256 and HKDF, GCM, the cipher layer, mbedTLS's pool allocator). The SDK calls
               SHA-256 only in secure aggregation (HKDF, the roster hash); TLS uses these too,
               and a crypto object goes to the smaller of the groups that use it; and the DIST
               data-shift task (its builder and hashed histogram), which the Client
               reaches only through secure aggregation (sdk/client/task_kinds.h)
  tls          mbedTLS's TLS client (ssl_*, ChaCha20-Poly1305, ECDH) and the device TLS channels
               (tls_channel, and the framing they share, tls_frame_stream)
  application  the firmware's own code and semihosting (not in any feature set)
The C runtime's members (libc, libm, libgcc, libstdc++) belong to the smallest group that uses
them: the link map's cross-reference table (-Wl,--cref) names who references each member, and a
member takes the lowest group (core < trainer < secagg < tls < application) among them, through
other runtime members too (only referencers the image keeps something of count: the table is
made before --gc-sections); one nobody references counts as core. So the application's printf
counts as the application, and a libm function only the trainer calls as the trainer.
The feature sets of issue 14 are cumulative: core; + trainer; + secagg ("everything but TLS");
+ tls ("everything with TLS"). A set over its budget fails (exit 1, naming the set), unless a
ceiling is given for it: then it fails only above the ceiling (a set known to be over budget may
not grow). With --map-for SET=MAP, that set is measured on the image of MAP instead: the same
firmware built with that set's task kinds only (examples/cortex_m_firmware: the core image has
data shift and KL, the trainer image adds the model-update and heterogeneity kinds; neither
links secure aggregation), whose link holds no other kind's code — checked: such an image that
links more than 1 KiB of the trainer's or secure aggregation's own objects fails too. Prints one
line per set.

Link-time optimised images (FEDSTAT_LTO, the cortex-m4 preset): the optimised code comes from the
linker's ltrans objects, not from the objects it was compiled in. With --names-from MAP=TWIN, TWIN
is the map of the same image linked without LTO (its attribution twin), and each section of an
ltrans object is attributed to the object whose section of the same name (a function's or a
constant's, -ffunction-sections/-fdata-sections; LTO's clone suffixes dropped) TWIN holds; the
runtime's members are ranked by TWIN's cross-reference table. A section no object of TWIN has a
name for (a function LTO made of inlined pieces) counts as core: the budgets are never flattered.
"""
import argparse
import re
import sys

GROUPS = [
    ('tls', ('ssl_', 'chacha20', 'poly1305', 'chachapoly', 'ecdh.c', 'tls_channel',
             'tls_frame_stream', 'tls_certificate_channel')),
    ('secagg', ('secagg', 'shamir', 'mask.cpp', 'crypto_exchange', 'bignum', 'constant_time',
                'contribution_data_shift_dist', 'hashed_histogram',
                'sha256.c', 'ecp.c',
                'ecp_curves', 'gcm.c', 'hkdf', 'cipher.c', 'cipher_wrap', '(md.c', 'md5',
                'memory_buffer_alloc')),
    ('trainer', ('quantise', 'rotation', 'logistic_trainer', 'model_update', 'heterogeneity')),
    ('application', ('main.cpp', 'provisioning', 'ledger_clock', 'stack_paint', 'startup_',
                     'cmsdk_uart', 'rdimon', 'semihosting')),
]
SETS = [('core', ('core',)), ('core+trainer', ('core', 'trainer')),
        ('everything but TLS', ('core', 'trainer', 'secagg')),
        ('everything with TLS', ('core', 'trainer', 'secagg', 'tls'))]
SECTION = re.compile(
    r'^ (\.(?:text|rodata|data)\S*)\s*\n?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)', re.M)
# LTO's names for a function's clones and pieces, and a function's string-literal section.
LTO_SUFFIX = re.compile(r'(\.(?:constprop|isra|part|lto_priv|cold|localalias)(?:\.\d+)?'
                        r'|\.str\d+\.\d+)+$')
UNNAMED_LTO = 'link-time optimised code of no named object'
LTO_ARCHIVES = ('libfedstat_sdk.a(', 'libfedstat_sdk_tls.a(', 'libfedstat_mbedcrypto.a(')


# Secure aggregation's own objects (not the crypto TLS shares with it). An image without it may
# hold a few hundred bytes of them: the Client wipes a SecAggClient it never started.
SECAGG_OWN = ('secagg_client', 'client_secagg', 'shamir', 'mask.cpp',
              'contribution_data_shift_dist', 'hashed_histogram')
LEFT_OUT_SLACK = 1024
RANK = ['core', 'trainer', 'secagg', 'tls', 'application']
RUNTIME = ('libc.a(', 'libc_nano.a(', 'libm.a(', 'libgcc.a(', 'libstdc++.a(', 'libstdc++_nano.a(',
           'libg.a(', 'libg_nano.a(')


def group_of(obj):
    for name, keys in GROUPS:
        if any(k in obj for k in keys):
            return name
    return 'core'


def is_runtime(obj):
    return obj.startswith(RUNTIME)


def referencers(map_text):
    """{object: set of objects that reference one of its symbols}, from the cross-reference
    table (empty without one)."""
    start = map_text.find('Cross Reference Table')
    refs = {}
    if start < 0:
        return refs
    definer = None
    pending_symbol = False  # a long symbol name: its definer is on the next line
    for line in map_text[start:].splitlines()[3:]:
        if not line.strip():
            continue
        if not line[0].isspace():
            parts = line.split(None, 1)
            pending_symbol = len(parts) == 1
            definer = None if pending_symbol else parts[1].strip().rsplit('/', 1)[-1]
            continue
        obj = line.strip().rsplit('/', 1)[-1]
        if pending_symbol:
            definer, pending_symbol = obj, False
        elif definer is not None and obj != definer:
            refs.setdefault(definer, set()).add(obj)
    return refs


def kept_sections(map_text):
    """[(section name, flash bytes, object)] of the sections the link kept."""
    text = map_text[map_text.index('Linker script and memory map'):]
    kept = []
    for m in SECTION.finditer(text):
        name, address, size, obj = m.group(1), int(m.group(2), 16), int(m.group(3), 16), m.group(4)
        if address == 0 or size == 0:  # discarded or empty
            continue
        kept.append((name, size, obj.rsplit('/', 1)[-1]))
    return kept


def is_lto(obj):
    return '.ltrans' in obj


def object_sizes(map_text, twin_sections=None):
    """{object: flash bytes of its kept sections}; with the kept sections of the image's
    attribution twin (linked without LTO), an ltrans object's sections go to the objects the
    twin names."""
    holders = {}
    for name, _, obj in twin_sections or []:
        holders.setdefault(LTO_SUFFIX.sub('', name), set()).add(obj)
    # A name says where an optimised section came from only if one object holds it in the twin
    # (not ".rodata" or ".rodata.str1.1", which every object has), and only if that object took
    # part in LTO, i.e. came from one of the project's archives: the image's own objects (compiled
    # without LTO) and the runtime's are never in the linker's own objects, so a name they hold
    # (an inline function both sides instantiate) names nothing.
    names = {name: next(iter(objs)) for name, objs in holders.items()
             if len(objs) == 1 and next(iter(objs)).startswith(LTO_ARCHIVES)}
    kept = {}
    for name, size, obj in kept_sections(map_text):
        if is_lto(obj):
            base = LTO_SUFFIX.sub('', name)
            # A function's string literals (.rodata.<function>.str1.1) go with the function.
            obj = names.get(base) or names.get(base.replace('.rodata.', '.text.', 1), UNNAMED_LTO)
        kept[obj] = kept.get(obj, 0) + size
    return kept


def left_out(kept, members):
    """Bytes an image measured for a set holds (`kept`: object_sizes) of the feature code it must
    leave out: the trainer's objects when the set has no trainer, secure aggregation's own (not
    the crypto TLS shares with it) when it has no secagg."""
    own = {'trainer': dict(GROUPS)['trainer'], 'secagg': SECAGG_OWN}
    return {g: sum(size for obj, size in kept.items() if any(k in obj for k in keys))
            for g, keys in own.items() if g not in members}


def sizes(map_text, kept, live=None):
    """{group: flash bytes} of a map whose object sizes are `kept` (object_sizes). `live`: the
    set of objects the link kept something of, by the map whose cross-reference table is
    `map_text` (default: those of `kept`)."""
    # The runtime's members: the lowest group among their referencers, to a fixed point. Only
    # live referencers count: the cross-reference table is made before --gc-sections, and a
    # member whose every section was discarded (libm's exp wrapper when no kept code calls exp)
    # keeps nothing in the image. With LTO, liveness comes from the twin that made the table: an
    # object LTO inlined everywhere still holds references there.
    if live is None:
        live = {obj for obj, size in kept.items() if size > 0}
    refs = {obj: {u for u in users if u in live}
            for obj, users in referencers(map_text).items()}
    rank = {}
    for obj in set(kept) | set(refs) | {r for rs in refs.values() for r in rs}:
        rank[obj] = len(RANK) if is_runtime(obj) else RANK.index(group_of(obj))
    changed = True
    while changed:
        changed = False
        for obj, users in refs.items():
            if not is_runtime(obj):
                continue
            best = min([rank[obj]] + [rank[u] for u in users])
            if best < rank[obj]:
                rank[obj], changed = best, True
    groups = {}
    for obj, size in kept.items():
        group = RANK[rank[obj]] if rank[obj] < len(RANK) else 'core'
        groups[group] = groups.get(group, 0) + size
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
    parser.add_argument('--map-for', action='append')
    parser.add_argument('--budget', action='append')
    parser.add_argument('--ceiling', action='append')
    parser.add_argument('--names-from', action='append')
    args = parser.parse_args()
    budgets, ceilings = parse_pairs(args.budget), parse_pairs(args.ceiling)
    twins = dict(pair.split('=', 1) for pair in args.names_from or [])

    def measure(path):
        """(object sizes, {group: bytes}) of one image: the twin's cross-reference table and
        liveness rank the runtime when there is one."""
        text = open(path).read()
        twin = open(twins[path]).read() if path in twins else None
        twin_sections = kept_sections(twin) if twin is not None else None
        kept = object_sizes(text, twin_sections)
        if kept.get(UNNAMED_LTO):
            print(f'footprint: {path}: {kept[UNNAMED_LTO]} bytes of link-time optimised code no '
                  'object names (counted as core)')
        if twin is None:
            return kept, sizes(text, kept)
        return kept, sizes(twin, kept, {obj for _, size, obj in twin_sections if size > 0})

    _, groups = measure(args.map)
    print('footprint by group (flash bytes): ' + ', '.join(f'{g} {groups.get(g, 0)}' for g in RANK))
    own_maps = {}
    failed = False
    for pair in args.map_for or []:
        name, path = pair.split('=', 1)
        kept, own_maps[name] = measure(path)
        print(f'footprint by group in the {name} image (flash bytes): ' +
              ', '.join(f'{g} {own_maps[name].get(g, 0)}' for g in RANK))
        for group, held in left_out(kept, dict(SETS)[name]).items():
            if held > LEFT_OUT_SLACK:
                print(f'footprint: the {name} image links {held} bytes of {group} code: the task '
                      'kinds it was built with no longer keep it out', file=sys.stderr)
                failed = True
    for name, members in SETS:
        total = sum(own_maps.get(name, groups).get(g, 0) for g in members)
        budget = budgets.get(name)
        line = f'footprint: {name}: {total} bytes ({total / 1024:.1f} KiB) of flash'
        if name in own_maps:
            line += f' (the {name} image)'
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
        print('footprint: a feature set is over its budget, or links what it must not (above)',
              file=sys.stderr)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
