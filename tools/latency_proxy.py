#!/usr/bin/python3
"""latency_proxy.py: a loopback HTTP/1.1 proxy that adds a fixed delay to every request and measures
how a client uses the network (issue 29, "measured, not assumed"). It stands between the S3 store and
s3rver in bench/s3_latency.py and tests/scripts/latency_proxy.sh.

    latency_proxy.py UPSTREAM_URL [--delay-ms D] [--port-file F] [--log F]

Listens on 127.0.0.1 (a port the system picks, written to --port-file) and forwards every request to
UPSTREAM_URL (http://127.0.0.1:PORT) after waiting D ms, over one upstream connection per client
connection (keep-alive on both sides). Request bodies (Content-Length or chunked) are read whole, then
forwarded; responses are passed through byte for byte as they arrive (1xx, Content-Length, chunked, or
up to the upstream's close). A request is *in flight* from the end of its header to the last byte of its
response. Per run it counts the requests by method, the most in flight at once, and the depth: the
longest chain of requests each of which started after the previous one ended, i.e. how many delays the
client waited one after another (a batch sent in parallel is one link of the chain, N requests sent one
after another are N).

Control requests (not forwarded, not counted), on the same port:
    GET /_proxy/stats[?reset=1]   the accounting since the last reset, as JSON (then reset)
    GET /_proxy/delay?ms=D        change the delay
With --log, one line per request: "METHOD TARGET STATUS START_S END_S" (times since the proxy started).
"""
import argparse
import asyncio
import heapq
import json
import os
import sys
import time
import urllib.parse

T0 = time.monotonic()


class Stats:
    def __init__(self):
        self.reset()

    def reset(self):
        self.by_method = {}
        self.by_status = {}
        self.inflight = 0
        self.max_inflight = 0
        self.spans = []  # (start, end) of every finished request

    def begin(self, method):
        self.by_method[method] = self.by_method.get(method, 0) + 1
        self.inflight += 1
        self.max_inflight = max(self.max_inflight, self.inflight)
        return time.monotonic()

    def end(self, start, status):
        self.inflight -= 1
        self.by_status[status] = self.by_status.get(status, 0) + 1
        self.spans.append((start, time.monotonic()))

    def depth(self):
        """The longest chain of requests, each starting after the previous one's end (O(n log n))."""
        best, done, longest = 0, [], 0
        for s, e in sorted(self.spans):
            while done and done[0][0] <= s:
                best = max(best, heapq.heappop(done)[1])
            heapq.heappush(done, (e, best + 1))
            longest = max(longest, best + 1)
        return longest

    def report(self):
        return {"requests": sum(self.by_method.values()), "by_method": self.by_method,
                "by_status": self.by_status, "max_inflight": self.max_inflight, "depth": self.depth(),
                "unfinished": self.inflight}


STATS = Stats()
ARGS = None
LOG = None


def headers_of(head):
    """(first line, {lower-case name: value}) of a message head (bytes ending in CRLF CRLF)."""
    lines = head.decode("latin-1").split("\r\n")
    h = {}
    for ln in lines[1:]:
        if ":" in ln:
            k, v = ln.split(":", 1)
            h[k.strip().lower()] = v.strip()
    return lines[0], h


async def read_body(reader, h, out=None):
    """Reads a message body framed by Content-Length or chunked encoding; returns its raw bytes, or, with
    `out` (a writer), passes them on as they come and returns None."""
    parts = []

    async def put(b):
        if out is None:
            parts.append(b)
        else:
            out.write(b)
            await out.drain()

    if "chunked" in h.get("transfer-encoding", "").lower():
        while True:
            line = await reader.readuntil(b"\r\n")
            await put(line)
            size = int(line.split(b";")[0].strip(), 16)
            if size == 0:
                while True:  # trailers, up to the empty line
                    t = await reader.readuntil(b"\r\n")
                    await put(t)
                    if t == b"\r\n":
                        break
                break
            await put(await reader.readexactly(size + 2))
    else:
        n = int(h.get("content-length", "0"))
        while n > 0:
            b = await reader.read(min(n, 1 << 16))
            if not b:
                raise asyncio.IncompleteReadError(b"", n)
            n -= len(b)
            await put(b)
    return None if out is not None else b"".join(parts)


async def control(target, writer):
    u = urllib.parse.urlsplit(target)
    q = urllib.parse.parse_qs(u.query)
    if u.path == "/_proxy/stats":
        body = json.dumps(STATS.report()).encode()
        if q.get("reset") == ["1"]:
            STATS.reset()
    elif u.path == "/_proxy/delay" and "ms" in q:
        ARGS.delay_ms = float(q["ms"][0])
        body = json.dumps({"delay_ms": ARGS.delay_ms}).encode()
    else:
        writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        return
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                 % (len(body), body))
    await writer.drain()


async def client(creader, cwriter):
    up = None  # (reader, writer) of this client's upstream connection
    try:
        while True:
            try:
                head = await creader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            first, h = headers_of(head)
            method, target = first.split(" ")[:2]
            if target.startswith("/_proxy/"):
                await control(target, cwriter)
                continue
            start = STATS.begin(method)
            status = "none"
            try:
                if "100-continue" in h.get("expect", "").lower():
                    cwriter.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # the body is read before forwarding
                body = await read_body(creader, h)
                if ARGS.delay_ms > 0:
                    await asyncio.sleep(ARGS.delay_ms / 1000)
                for attempt in (0, 1):  # a reused upstream connection may have been closed meanwhile
                    fresh = up is None
                    if fresh:
                        up = await asyncio.open_connection(ARGS.host, ARGS.port)
                    up[1].write(head + body)
                    try:
                        await up[1].drain()
                        rhead = await up[0].readuntil(b"\r\n\r\n")
                        break
                    except (asyncio.IncompleteReadError, ConnectionError):
                        up[1].close()
                        up = None
                        if fresh or attempt:
                            raise
                while True:
                    rfirst, rh = headers_of(rhead)
                    code = int(rfirst.split(" ")[1])
                    if 100 <= code < 200:
                        if code != 100 or "100-continue" not in h.get("expect", "").lower():
                            cwriter.write(rhead)
                        rhead = await up[0].readuntil(b"\r\n\r\n")
                        continue
                    break
                status = str(code)
                cwriter.write(rhead)
                await cwriter.drain()
                close_after = "close" in rh.get("connection", "").lower()
                if method == "HEAD" or code in (204, 304):
                    pass
                elif "chunked" in rh.get("transfer-encoding", "").lower() or "content-length" in rh:
                    await read_body(up[0], rh, cwriter)
                else:  # the body runs to the upstream's close
                    while b := await up[0].read(1 << 16):
                        cwriter.write(b)
                        await cwriter.drain()
                    close_after = True
            finally:
                STATS.end(start, status)
                if LOG:
                    LOG.write(f"{method} {target} {status} {start - T0:.6f} {time.monotonic() - T0:.6f}\n")
                    LOG.flush()
            if close_after:
                return
    except Exception as e:  # a broken exchange closes both connections, as a real network would
        sys.stderr.write(f"latency_proxy: {type(e).__name__}: {e}\n")
    finally:
        if up:
            up[1].close()
        cwriter.close()


async def main():
    global ARGS, LOG
    p = argparse.ArgumentParser()
    p.add_argument("upstream")
    p.add_argument("--delay-ms", type=float, default=0)
    p.add_argument("--port-file")
    p.add_argument("--log")
    ARGS = p.parse_args()
    u = urllib.parse.urlsplit(ARGS.upstream)
    ARGS.host, ARGS.port = u.hostname, u.port or 80
    if ARGS.log:
        LOG = open(ARGS.log, "a")
    # a backlog for every connection a client may open at once (H5ZARR_HTTP_INFLIGHT is up to 256)
    server = await asyncio.start_server(client, "127.0.0.1", 0, limit=1 << 20, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    if ARGS.port_file:
        with open(ARGS.port_file + ".tmp", "w") as f:
            f.write(f"{port}\n")
        os.replace(ARGS.port_file + ".tmp", ARGS.port_file)
    else:
        print(port, flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
