#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tcpinject: a TCP client made by hand, for segments a kernel would not send.

tcpinject IFACE SRC_IP DST_IP DST_PORT DST_MAC

From IFACE (an AF_PACKET socket: run it in a namespace where SRC_IP is no
local address, so that its kernel leaves the server's replies alone; the
server's side needs a neighbour entry for SRC_IP) it connects to
DST_IP:DST_PORT (an IPv4 server, DST_MAC its interface), then sends, in
this order:

  1. bytes 1000..1999 of the stream (out of order: 0..999 are missing)
  2. the same segment again (a duplicate of out-of-order data)
  3. 100 bytes 10,000,000 past the window (TCP drops them)
  4. bytes 0..999 (the gap filled: 2000 bytes in order)
  5. a FIN after byte 1999

and waits for the FIN's ACK. The server received exactly 2000 bytes in 4
data segments, 2 of which it dropped. Prints "sent 2000" and exits 0; on a
failure a message and status 1.
"""
import random
import socket
import struct
import sys
import time

ETH_P_IP = 0x0800
FIN, SYN, ACK, PSH = 0x01, 0x02, 0x10, 0x08
TIMEOUT = 10


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


class Conn:
    def __init__(self, iface, src, dst, dport, dmac):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IP))
        self.s.bind((iface, ETH_P_IP))
        self.s.settimeout(0.2)
        self.smac = self.s.getsockname()[4]
        self.dmac = bytes.fromhex(dmac.replace(":", ""))
        self.src, self.dst = socket.inet_aton(src), socket.inet_aton(dst)
        self.sport, self.dport = random.randint(20000, 60000), dport
        self.isn = 1000

    def send(self, seq, ack, flags, payload=b""):
        tcp = struct.pack("!HHIIBBHHH", self.sport, self.dport, seq & 0xFFFFFFFF,
                          ack & 0xFFFFFFFF, 5 << 4, flags, 65535, 0, 0) + payload
        pseudo = self.src + self.dst + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp))
        tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), random.randint(0, 65535),
                         0x4000, 64, socket.IPPROTO_TCP, 0, self.src, self.dst)
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        self.s.send(self.dmac + self.smac + struct.pack("!H", ETH_P_IP) + ip + tcp)

    def recv(self, want):
        """The next segment from the server with all flags of @want: (seq, ack, flags)."""
        end = time.monotonic() + TIMEOUT
        while time.monotonic() < end:
            try:
                frame = self.s.recv(65535)
            except socket.timeout:
                continue
            ip = frame[14:]
            if len(ip) < 40 or ip[9] != socket.IPPROTO_TCP or ip[12:16] != self.dst:
                continue
            tcp = ip[(ip[0] & 15) * 4:]
            sport, dport, seq, ack, _, flags = struct.unpack("!HHIIBB", tcp[:14])
            if (sport, dport) == (self.dport, self.sport) and flags & want == want:
                return seq, ack, flags
        sys.exit("tcpinject: no reply with flags %#x from the server" % want)


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__.split("\n\n")[1])
    c = Conn(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    c.send(c.isn, 0, SYN)
    peer, _, _ = c.recv(SYN | ACK)
    a = c.isn + 1           # our first data byte
    r = peer + 1            # what we acknowledge
    c.send(a, r, ACK)
    c.send(a + 1000, r, ACK | PSH, b"b" * 1000)
    c.send(a + 1000, r, ACK | PSH, b"b" * 1000)
    c.send(a + 10000000, r, ACK | PSH, b"x" * 100)
    c.send(a, r, ACK | PSH, b"a" * 1000)
    c.send(a + 2000, r, ACK | FIN)
    while True:
        _, ack, _ = c.recv(ACK)
        if ack == (a + 2001) & 0xFFFFFFFF:
            break
    print("sent 2000", flush=True)


if __name__ == "__main__":
    main()
