#!/usr/bin/env python3
"""wire.py PCAP PORT: what a loader's traffic looked like on the wire.

Reads a pcap of loopback traffic to the server on PORT (tcpdump -i lo -w)
and prints one line of key=value pairs:
  wire_p50_us, wire_p99_us   per-request latency on the wire: from the first
                             client->server packet carrying a request to the
                             next server->client packet carrying data, per
                             connection (one request in flight per
                             connection, as both loaders compared here send)
  requests                   requests seen
  gap_cv                     coefficient of variation of the gaps between
                             consecutive requests (0: perfectly even; 1:
                             Poisson; above 1: bursts)
  burst_pct                  % of requests sent within 10 us of the previous
No dependency beyond the standard library; reads classic pcap (us or ns).
"""
import struct
import sys


def packets(path):
    with open(path, "rb") as f:
        head = f.read(24)
        magic = struct.unpack("<I", head[:4])[0]
        if magic not in (0xA1B2C3D4, 0xA1B23C4D):
            sys.exit(f"{path}: not a little-endian classic pcap")
        scale = 1e9 if magic == 0xA1B23C4D else 1e6
        link = {1: 14, 113: 16, 276: 20, 0: 4}[struct.unpack("<I", head[20:24])[0]]
        while len(h := f.read(16)) == 16:
            sec, frac, incl, _ = struct.unpack("<IIII", h)
            ip = f.read(incl)[link:]
            if len(ip) < 20 or ip[0] >> 4 != 4:
                continue
            ihl = (ip[0] & 15) * 4
            total = struct.unpack(">H", ip[2:4])[0]
            tcp = ip[ihl:]
            src, dst = struct.unpack(">HH", tcp[:4])
            payload = total - ihl - (tcp[12] >> 4) * 4
            if payload > 0:
                yield sec + frac / scale, src, dst


def main(path, port):
    pending, latencies, sends = {}, [], []
    for t, src, dst in packets(path):
        if dst == port:
            if src not in pending:  # a request's first segment
                pending[src] = t
                sends.append(t)
        elif src == port and dst in pending:
            latencies.append(t - pending.pop(dst))
    if len(latencies) < 100:
        sys.exit(f"{path}: only {len(latencies)} requests answered on port {port}")
    latencies.sort()
    q = lambda p: latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1e6
    gaps = [b - a for a, b in zip(sends, sends[1:])]
    mean = sum(gaps) / len(gaps)
    sd = (sum((g - mean) ** 2 for g in gaps) / len(gaps)) ** 0.5
    burst = 100 * sum(g < 10e-6 for g in gaps) / len(gaps)
    print(f"requests={len(latencies)} wire_p50_us={q(0.50):.1f} wire_p99_us={q(0.99):.1f} "
          f"gap_cv={sd / mean:.2f} burst_pct={burst:.1f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]))
