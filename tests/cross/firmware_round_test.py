#!/usr/bin/env python3
"""A microcontroller in a real round: Cortex-M4 firmware images (examples/cortex_m_firmware) under
qemu-system-arm and emulated host devices (fedstat-sim) take part in one task served by a real
fedstat-server. Each firmware speaks TLS 1.2 (ECDHE-PSK, its own credential) over its UART, which
QEMU connects to the server's port.

Checks:
  * every firmware image and every host device completes the round;
  * the published result equals the in-process computation over all devices (fedstat-sim, with
    the firmware devices' data and seeds: --external), bit for bit (sum_sha256) and in its
    estimate;
  * trust none: each firmware device's stored report (its Report chunks, decoded from the
    server's store) is word for word the report x86-64 computes for the same device
    (contribution_sha256), so the M4 and the host build bit-identical reports;
  * each firmware's stack high-water mark (stack painting) fits its 8 KiB stack;
  * with --core-firmware, the last firmware device runs the core image (the Client built with
    the data-shift and KL kinds only: sdk/client/task_kinds.h) and its report is checked the same;
  * the application image (--production-firmware, not the test build the round runs) refuses a
    device.txt with a seed: a seeded stream would make its noise and keys public;
  * a firmware image with a key the server does not hold is refused at the TLS handshake, twice
    (two provisioned check-ins), and the server logs the refusals;
  * with --signed (trust dist, issue 42): fedstat-ca (beside --server) issues the fleet's
    credentials, the server holds only ca.pub, each firmware image is provisioned with its
    credential (device.txt: signing_key, certificate, ca_public_key) and fedstat-sim's devices
    with theirs; the round must be signed (the server closed a consistency stage), and a firmware
    image whose signing key is not its certificate's refuses it before it connects.

  firmware_round_test.py --server S --sim SIM --firmware ELF --emulator 'qemu|-M|...|-kernel'
                         --work DIR --kind data_shift|kl|model_update --trust none|dist
                         [--production-firmware ELF] [--core-firmware ELF]
                         [--firmware-devices 2] [--host-devices 2] [--graph complete|sparse]
                         [--signed]
"""
import argparse
import hashlib
import hmac
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'common'))
from protobuf_fields import protobuf_fields  # noqa: E402  (tests/common)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'scripts'))
import logistic_data  # noqa: E402  (scripts/logistic_data.py)

FLEET_SECRET = bytes([0x5a] * 32)  # as tests/emulation/common.sh
TASK_ID = 3
DEVICE_SEED = 17
STACK_BYTES = 8192  # examples/cortex_m_firmware/firmware.ld


def device_psk(device_id):
    """The server's per-device key: HKDF-SHA256(salt none, fleet secret,
    "fedstat device psk v1" || id as 8 bytes big-endian) (host_server/net/credentials.cpp)."""
    prk = hmac.new(b'\0' * 32, FLEET_SECRET, hashlib.sha256).digest()
    info = b'fedstat device psk v1' + struct.pack('>Q', device_id)
    return hmac.new(prk, info + b'\x01', hashlib.sha256).digest()


def declare(kind, trust, clients, graph=None, signed=False):
    """The task, its data (a Zipf law over 120 items shifted by 15 ids; model_update: logistic
    examples, 64 per device, as tests/emulation/round_test.sh; split across the devices by
    fedstat-sim) and the server's configuration, in the working directory."""
    os.makedirs('data')
    rng, d, per_client = random.Random(20261123), 8, 64
    w = logistic_data.true_weights(rng, d)
    logistic_data.write_rows('data/examples.csv', clients * per_client, w, rng)
    logistic_data.write_rows('evaluation.csv', 2000, w, rng)
    with open('data/items.txt', 'w') as f:
        for i in range(120):
            f.write(f'{i + 15} {max(1, 1000 // (i + 1))}\n')
    with open('reference.txt', 'w') as f:
        for i in range(320):
            f.write(f'{i} {max(1, 100000 // (i + 1))}\n')
    task = {'id': TASK_ID, 'kind': kind, 'trust': trust, 'epsilon': 0, 'delta': 0,
            'min_clients': clients, 'max_clients': clients, 'deadline_seconds': 900,
            'admission_seconds': 300, 'phase_timeout_seconds': 300, 'seed': '00' * 31 + '31'}
    if kind == 'data_shift' and trust == 'dist':
        # The hashed histogram (issue 41) at the demo's size: 2048 buckets of 32-bit words, ε = 3
        # item level. The Client holds them as 8·2048 = 16 KiB plus the roster (144 B a device
        # on a 64-bit host, less on the M4), within the firmware's 18 KiB arena.
        task.update({'epsilon': 3.0, 'delta': 0})
        task['data_shift'] = {'buckets': 2048, 'max_events': 0, 'reference': 'reference.txt'}
    elif kind == 'data_shift':
        # 3 × 256 words: the Client needs 16 KiB for it, within the firmware's 18 KiB arena.
        task['data_shift'] = {'rows': 3, 'width': 256, 'heap_capacity': 64, 'k': 1024,
                              'domain': 400, 'local_epsilon': 0, 'reference': 'reference.txt'}
    elif kind == 'kl':
        task.update({'epsilon': 1.0, 'delta': 1e-6})
        task['kl'] = {'reference': 'reference.txt', 'rounds': 300, 'lambda': 0.1}
    else:
        task.update({'epsilon': 1.0, 'delta': 1e-6})
        task['model_update'] = {'dimension': d, 'epochs': 20, 'batches': 4,
                                'averaging_interval': 20, 'eta0': 4.0, 'mu': 0.001,
                                'clip_norm': 10.0, 'rotate': True, 'gamma': 4096.0,
                                'beta': 0.6065306597, 'bits': 32,
                                'examples_per_client': per_client, 'evaluation': 'evaluation.csv'}
    if graph:
        task['graph'] = graph  # trust dist: its (k, t) from the bound at max_clients
    with open('task.json', 'w') as f:
        json.dump(task, f)
    config = {'listen': '127.0.0.1:0', 'store': 'server.db', 'fleet_secret': FLEET_SECRET.hex(),
              'tasks': [task]}
    if signed:
        config['ca_public_key'] = 'ca.pub'  # the server checks signed keys; it cannot mint any
    with open('server.json', 'w') as f:
        json.dump(config, f)


def issue_credentials(args, clients):
    """A seeded fleet CA (ca.key, ca.pub) and credentials for devices 1..clients (fleet.creds),
    by fedstat-ca beside the server, as tests/emulation/common.sh's issue_signed_fleet; returns
    device.txt's credential lines per device id (fleet_credentials.h's formats)."""
    ca = os.path.join(os.path.dirname(args.server), 'fedstat-ca')
    subprocess.run([ca, 'init', '--out-key', 'ca.key', '--out-public', 'ca.pub', '--seed', '5'],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([ca, 'issue', '--ca-key', 'ca.key', '--first-id', '1', '--count', str(clients),
                    '--seed', '6', '--out', 'fleet.creds'], check=True, stdout=subprocess.DEVNULL)
    ca_public = open('ca.pub').read().split('\n')[1].strip()
    lines = {}
    for line in open('fleet.creds').read().split('\n')[1:]:
        if line.strip() and not line.startswith('#'):
            device_id, private_key, public_key, signature = line.split()
            lines[int(device_id)] = (f'signing_key {private_key}\n'
                                     f'certificate {device_id} {public_key} {signature}\n'
                                     f'ca_public_key {ca_public}')
    return lines


def sim_command(args, endpoint, external):
    """fedstat-sim over the whole fleet (the data split across all of it), running the devices
    after the first `external` (the firmware's)."""
    return [args.sim, '--server', endpoint,
            '--clients', str(args.firmware_devices + args.host_devices),
            '--external', str(external), '--external-dir', 'external',
            '--task', 'task.json', '--data', 'data', '--fleet-secret', FLEET_SECRET.hex(),
            '--seed', str(DEVICE_SEED), '--noise-seed', '9', '--state', 'state',
            '--max-sessions', '20000', '--json',
            # the task's trust model, opted in to (trust none: the SDK's default declines it)
            '--accept-trust', args.trust] + (
                ['--credentials', 'fleet.creds', '--ca-public-key', 'ca.pub'] if args.signed else [])


def provision(home, device_id, psk_hex, extra, data_of=None):
    """A firmware image's directory: device.txt (id, key and the `extra` line) and the sensor
    data or examples fedstat-sim wrote for device `data_of` (default: this device), renamed."""
    os.makedirs(home)
    with open(os.path.join(home, 'device.txt'), 'w') as f:
        f.write(f'id {device_id}\npsk {psk_hex}\n{extra}\n')
    source = device_id if data_of is None else data_of
    for kind in ('items', 'examples'):
        data = os.path.join('external', f'device-{source}-{kind}.txt')
        if os.path.exists(data):
            shutil.copy(data, os.path.join(home, f'device-{device_id}-{kind}.txt'))
    return home


def qemu_command(args, port, image=None):
    """QEMU running a firmware test build (default: --firmware) with its UART connected to the
    server's port."""
    emulator = args.emulator.split('|')
    kernel = emulator.index('-kernel')
    return (emulator[:kernel] +
            ['-chardev', f'socket,id=uart0,host=127.0.0.1,port={port},reconnect=1',
             '-serial', 'chardev:uart0'] + emulator[kernel:] + [image or args.firmware])


def start_firmware(args, device_id, port):
    """One QEMU running the firmware in its own directory (its semihosting files: device.txt,
    its sensor events, its ledger and round marker). With --core-firmware, the last device runs
    the core image (data-shift and KL kinds only, linked without the others)."""
    # "trust": the task's trust model, opted in to as the host devices are (--accept-trust).
    extra = f'seed {DEVICE_SEED}\ntrust {args.trust}'
    if args.signed:
        extra += '\n' + args.credentials[device_id]
    home = provision(f'firmware-{device_id}', device_id, device_psk(device_id).hex(), extra)
    core = args.core_firmware and device_id == args.firmware_devices
    command = qemu_command(args, port, args.core_firmware if core else None)
    out = open(os.path.join(home, 'out.txt'), 'w')
    return subprocess.Popen(command, cwd=home, stdout=out, stderr=subprocess.STDOUT), out


def run_with_wrong_key(args, port):
    """A firmware image whose key the server does not hold, allowed two check-ins: both must be
    refused at the handshake (a key the server holds for another id would be the same case)."""
    home = provision('wrong-key', 77, 'ab' * 32, 'sessions 2', data_of=1)
    command = qemu_command(args, port)
    run = subprocess.run(command, cwd=home, capture_output=True, text=True, timeout=120)
    # The code, not the message: the cortex-m4 preset's SDK keeps no messages.
    refusals = run.stdout.count('connect: permission_denied')
    assert run.returncode != 0 and refusals == 2, (run.returncode, run.stdout)
    return f'exit {run.returncode}, {refusals} handshakes refused'


def refuses_wrong_signing_key(args):
    """A firmware image provisioned with device 1's certificate but device 2's signing key must
    refuse its credential (check_credential: kPermissionDenied) before it connects: port 1 has
    no server, so a device that went on would fail differently."""
    lines = args.credentials[1].split('\n')
    lines[0] = args.credentials[2].split('\n')[0]
    home = provision('wrong-signing-key', 1, device_psk(1).hex(),
                     f'seed {DEVICE_SEED}\nsessions 1\n' + '\n'.join(lines), data_of=1)
    run = subprocess.run(qemu_command(args, 1), cwd=home, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode != 0 and 'firmware: credential: permission_denied' in run.stdout, \
        (run.returncode, run.stdout)
    print('a firmware whose signing key is not its certificate\'s refuses it:',
          next(line for line in run.stdout.splitlines() if 'firmware: credential:' in line))


def refuses_seed(args):
    """The application image, provisioned with a seed, must refuse it before it connects."""
    home = provision('production', 1, device_psk(1).hex(), f'seed {DEVICE_SEED}')
    emulator = args.emulator.split('|')
    run = subprocess.run(emulator + [args.production_firmware], cwd=home, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode != 0 and 'only the test build' in run.stdout, (run.returncode, run.stdout)
    print('the application image refuses a seed:', run.stdout.splitlines()[-2])


def stored_reports(device_id):
    """The words of the Report chunks the server stored from `device_id`, in offset order
    (proto/fedstat/v1/envelope.proto: Envelope.report = 15; Report.offset = 2, words = 4, packed
    fixed64)."""
    db = sqlite3.connect('server.db')
    try:
        rows = db.execute('SELECT payload FROM events WHERE task_id = ? AND client_id = ?',
                          (TASK_ID, device_id)).fetchall()
    finally:
        db.close()
    chunks = {}
    for (payload,) in rows:
        for field, wire, body in protobuf_fields(payload):
            if field == 15 and wire == 2:
                fields = protobuf_fields(body)
                offset = next((v for f, w, v in fields if f == 2 and w == 0), 0)
                words = []
                for f, w, v in fields:
                    if f == 4 and w == 2:  # packed fixed64
                        words += struct.unpack(f'<{len(v) // 8}Q', v)
                    elif f == 4 and w == 1:  # one unpacked fixed64
                        words.append(struct.unpack('<Q', v)[0])
                chunks[offset] = words
    words = []
    for offset in sorted(chunks):
        assert offset == len(words), f'device {device_id}: a gap before offset {offset}'
        words += chunks[offset]
    return words


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    for name in ('--server', '--sim', '--firmware', '--emulator', '--work', '--kind', '--trust'):
        parser.add_argument(name, required=True)
    parser.add_argument('--production-firmware')
    parser.add_argument('--core-firmware')
    parser.add_argument('--firmware-devices', type=int, default=2)
    parser.add_argument('--host-devices', type=int, default=2)
    parser.add_argument('--graph', choices=('complete', 'sparse'),
                        help='the DIST task\'s secure-aggregation graph (default: the task plan\'s)')
    parser.add_argument('--signed', action='store_true',
                        help='signed secure aggregation: every device holds a fleet-CA credential')
    args = parser.parse_args()
    assert not args.signed or args.trust == 'dist', '--signed needs --trust dist'
    for name in ('server', 'sim', 'firmware'):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    for name in ('production_firmware', 'core_firmware'):
        if getattr(args, name):
            setattr(args, name, os.path.abspath(getattr(args, name)))
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(os.path.join(args.work, 'state'))
    os.makedirs(os.path.join(args.work, 'external'))
    os.chdir(args.work)
    clients = args.firmware_devices + args.host_devices
    declare(args.kind, args.trust, clients, args.graph, args.signed)
    if args.signed:
        args.credentials = issue_credentials(args, clients)

    # Every device external first: fedstat-sim only writes each device's share of the data and
    # exits (no device of its own runs), so the images can be provisioned before the round.
    subprocess.run(sim_command(args, '127.0.0.1:1', clients), check=True, stdout=subprocess.DEVNULL)

    server_log = open('server.log', 'w')
    server = subprocess.Popen([args.server, '--config', 'server.json', '--port-file', 'port'],
                              stderr=server_log)
    firmware = []
    try:
        for _ in range(600):  # the port file appears once the server listens (bounded wait)
            if os.path.exists('port') and os.path.getsize('port') > 0:
                break
            assert server.poll() is None, 'the server exited before listening'
            time.sleep(0.1)
        port = int(open('port').read())
        started = time.monotonic()
        firmware = [start_firmware(args, i + 1, port) for i in range(args.firmware_devices)]
        sim = subprocess.run(sim_command(args, f'127.0.0.1:{port}', args.firmware_devices),
                             capture_output=True, text=True, timeout=600)
        assert sim.returncode == 0, sim.stderr
        with open('sim.json', 'w') as f:
            f.write(sim.stdout)
        codes = [p.wait(timeout=300) for p, _ in firmware]
        # Each firmware's wall time from its start to its exit (the round and its footprint).
        firmware_seconds = time.monotonic() - started
        wrong_key = run_with_wrong_key(args, port)
        result = subprocess.run([args.server, 'results', str(TASK_ID), '--config', 'server.json',
                                 '--json'], capture_output=True, text=True)
    finally:
        for p, out in firmware:
            if p.poll() is None:
                p.kill()
            out.close()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        server_log.close()

    print('a firmware with a wrong key:', wrong_key)
    refused = open('server.log').read().count('"event":"refused"')
    assert refused >= 2, f'the server logged {refused} refusals for the wrong-key firmware'
    if args.production_firmware:
        refuses_seed(args)
    if args.signed:
        # A signed session runs the consistency stage between the masked input and the reveals
        # (tests/emulation/round_test.sh checks the same): without it the round was not signed.
        log = open('server.log').read()
        assert 'secagg_closed (consistency, ' in log, 'signed: the server closed no consistency stage'
        print('signed: the server closed the consistency stage:',
              re.search(r'secagg_closed \(consistency, [^)]*\)', log).group(0))
        refuses_wrong_signing_key(args)
    failed = False
    for i, code in enumerate(codes):
        text = open(f'firmware-{i + 1}/out.txt').read()
        core = args.core_firmware and i + 1 == args.firmware_devices
        print(f'--- firmware device {i + 1}{" (the core image)" if core else ""} (exit {code}):'
              f'\n{text}')
        if core:
            assert 'task kinds data_shift kl, no secure aggregation' in text, 'not the core image'
        if args.signed:
            assert 'credential checked (signed DIST rounds only)' in text, 'no credential'
        if code != 0 or f'task {TASK_ID} completed' not in text:
            failed = True
        m = re.search(r'stack high-water (\d+) of (\d+)', text)
        assert m and int(m.group(1)) < STACK_BYTES, 'no stack high-water mark within 8 KiB'
    assert not failed, 'a firmware device did not complete the round'
    assert result.returncode == 0, f'no published result: {result.stderr}'
    published = json.loads(result.stdout)
    sim = json.loads(open('sim.json').read())
    print('host devices:', sim['outcomes'])
    print('published:', published)
    assert sim['outcomes'].get('completed') == args.host_devices, sim['outcomes']
    expected = sim['expected']
    assert published['contributors'] == clients, published
    assert published['sum_sha256'] == expected['sum_sha256'], 'the sum differs from in-process'
    assert published['estimate'] == expected['estimate'], (published, expected)
    if args.kind == 'model_update':
        assert published['model'] == expected['model'], (published['model'], expected['model'])
    if args.trust == 'none':
        for device in sim['devices'][:args.firmware_devices]:
            words = stored_reports(device['id'])
            digest = hashlib.sha256(b''.join(struct.pack('<Q', w) for w in words)).hexdigest()
            assert digest == device['contribution_sha256'], \
                f'device {device["id"]}: the M4 report differs from the x86-64 one'
            print(f'device {device["id"]}: the M4 report ({len(words)} words) equals x86-64\'s')
    print(f'firmware round ({args.kind}, {args.trust}{", signed" if args.signed else ""}): '
          f'{args.firmware_devices} Cortex-M4 + '
          f'{args.host_devices} host devices, result equal to the in-process computation; '
          f'the round took {firmware_seconds:.1f} s (firmware start to last exit)')


if __name__ == '__main__':
    main()
