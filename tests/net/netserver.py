#!/usr/bin/python3
"""netserver.py: the loopback HTTP servers of the network-store tests (tests/net/netlib.sh starts
and stops them). Not a test itself.

  netserver.py static DIR [options]        serves the files under DIR (GET, HEAD, byte ranges: 206,
                                           suffix ranges, 416), HTTP/1.1 keep-alive
  netserver.py proxy UPSTREAM_URL [opts]   forwards every request to UPSTREAM_URL (an S3 server), and can
                                           check SigV4 signatures that the upstream does not check
Options:
  --port-file F     write the port (bound on 127.0.0.1, chosen by the system) to F once listening
  --log F           one line per request: "<n> <METHOD> <path>?<query> <outcome>" (outcome: a status,
                    "drop" (closed before answering), "drop-after" (forwarded, then closed unanswered))
  --faults N        every N-th request starts a burst of 4 faults, one of each kind in turn: 503 SlowDown,
                    a connection closed before answering, 500, a connection closed after the request
                    was forwarded (PUTs then land upstream but the client sees no answer)
  --sigv4 ID:SECRET (proxy) refuse a request whose SigV4 signature is not the one ID:SECRET gives
                    (403 SignatureDoesNotMatch), and unsigned requests (403 AccessDenied)
  --no-ranges       (static) ignore Range headers (answer 200 with the whole file), as some servers do
  --fail-put S      every PUT whose path holds S is answered 500 InternalError, always (a write that
                    still fails after its retries)
  --stall-put S     every PUT whose path holds S is read, then left unanswered for --stall-s seconds
                    (default 120): a server that stalls mid-pipeline
"""
import argparse
import hashlib
import hmac
import http.client
import os
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOCK = threading.Lock()
COUNT = [0]
LOGF = None


def log(n, method, path, outcome):
    if LOGF:
        with LOCK:
            LOGF.write(f"{n} {method} {path} {outcome}\n")
            LOGF.flush()


def fault_for(n):
    """The fault of request n (1-based), or None."""
    if not ARGS.faults:
        return None
    k = (n - 1) % ARGS.faults
    return ["503", "drop", "500", "drop-after"][k] if k < 4 else None


def s3_error(code, msg):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{msg}</Message>'
            f'</Error>').encode()


def sigv4_ok(h):
    """True when the request's SigV4 Authorization matches the configured key (proxy --sigv4)."""
    key_id, secret = ARGS.sigv4.split(":", 1)
    auth = h.headers.get("Authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return False, "AccessDenied"
    parts = dict(p.strip().split("=", 1) for p in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    cred = parts["Credential"].split("/")
    if cred[0] != key_id:
        return False, "InvalidAccessKeyId"
    date, region, service = cred[1], cred[2], cred[3]
    signed = parts["SignedHeaders"].split(";")
    u = urllib.parse.urlsplit(h.path)
    q = urllib.parse.parse_qsl(u.query, keep_blank_values=True)
    enc = lambda s: urllib.parse.quote(s, safe="-_.~")
    cq = "&".join(f"{enc(k)}={enc(v)}" for k, v in sorted(q))
    ch = "".join(f"{n}:{' '.join(h.headers.get(n, '').split())}\n" for n in signed)
    payload = h.headers.get("x-amz-content-sha256", "")
    creq = "\n".join([h.command, u.path, cq, ch, parts["SignedHeaders"], payload])
    scope = f"{date}/{region}/{service}/aws4_request"
    sts = "\n".join(["AWS4-HMAC-SHA256", h.headers.get("x-amz-date", ""), scope,
                     hashlib.sha256(creq.encode()).hexdigest()])
    k = ("AWS4" + secret).encode()
    for m in (date, region, service, "aws4_request"):
        k = hmac.new(k, m.encode(), hashlib.sha256).digest()
    want = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(want, parts.get("Signature", "")), "SignatureDoesNotMatch"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def drop(self):
        self.close_connection = True
        try:
            self.connection.shutdown(2)
        except OSError:
            pass

    def handle_any(self):
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
        body = b""
        if "Content-Length" in self.headers:
            body = self.rfile.read(int(self.headers["Content-Length"]))
        f = fault_for(n)
        if self.command == "PUT" and ARGS.fail_put and ARGS.fail_put in self.path:
            f = "500"
        if self.command == "PUT" and ARGS.stall_put and ARGS.stall_put in self.path:
            log(n, self.command, self.path, "stall")
            time.sleep(ARGS.stall_s)
            return self.drop()
        if f == "503":
            log(n, self.command, self.path, "503")
            return self.answer(503, s3_error("SlowDown", "Please reduce your request rate."))
        if f == "500":
            log(n, self.command, self.path, "500")
            return self.answer(500, s3_error("InternalError", "We encountered an internal error."))
        if f == "drop":
            log(n, self.command, self.path, "drop")
            return self.drop()
        if ARGS.mode == "static":
            status = self.static(body)
        else:
            status = self.proxy(body, f == "drop-after")
        log(n, self.command, self.path, "drop-after" if f == "drop-after" else status)

    def static(self, body):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        full = os.path.realpath(os.path.join(ARGS.target, path.lstrip("/")))
        root = os.path.realpath(ARGS.target)
        if self.command not in ("GET", "HEAD"):
            self.answer(405)
            return 405
        if not (full == root or full.startswith(root + os.sep)) or not os.path.isfile(full):
            self.answer(404, b"not found")
            return 404
        data = open(full, "rb").read()
        rng = self.headers.get("Range")
        if rng and not ARGS.no_ranges and rng.startswith("bytes="):
            a, _, z = rng[6:].partition("-")
            size = len(data)
            if a == "":
                first, last = max(0, size - int(z)), size - 1
            else:
                first, last = int(a), (int(z) if z else size - 1)
                last = min(last, size - 1)
            if size == 0 or first >= size or first > last:
                self.answer(416, b"", [("Content-Range", f"bytes */{size}")])
                return 416
            self.answer(206, data[first:last + 1], [("Content-Range", f"bytes {first}-{last}/{size}")])
            return 206
        self.answer(200, data)
        return 200

    def proxy(self, body, drop_after):
        if ARGS.sigv4:
            ok, code = sigv4_ok(self)
            if not ok:
                self.answer(403, s3_error(code, "The request signature we calculated does not match."))
                return 403
        up = urllib.parse.urlsplit(ARGS.target)
        c = http.client.HTTPConnection(up.hostname, up.port, timeout=60)
        hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "keep-alive")}
        c.request(self.command, self.path, body=body if body or self.command == "PUT" else None, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        c.close()
        if drop_after:
            self.drop()
            return r.status
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("connection", "keep-alive", "transfer-encoding", "content-length"):
                self.send_header(k, v)
        # a HEAD's Content-Length is the object's, not the (empty) body's
        self.send_header("Content-Length", r.getheader("Content-Length", "0") if self.command == "HEAD" else
                         str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        return r.status

    do_GET = do_HEAD = do_PUT = do_DELETE = do_POST = handle_any


def main():
    global ARGS, LOGF
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["static", "proxy"])
    p.add_argument("target")
    p.add_argument("--port-file")
    p.add_argument("--log")
    p.add_argument("--faults", type=int, default=0)
    p.add_argument("--sigv4")
    p.add_argument("--no-ranges", action="store_true")
    p.add_argument("--fail-put")
    p.add_argument("--stall-put")
    p.add_argument("--stall-s", type=float, default=120)
    ARGS = p.parse_args()
    if ARGS.log:
        LOGF = open(ARGS.log, "a")
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.request_queue_size = 1024  # the store opens up to H5ZARR_HTTP_INFLIGHT connections at once
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if ARGS.port_file:
        with open(ARGS.port_file + ".tmp", "w") as f:
            f.write(str(srv.server_address[1]))
        os.rename(ARGS.port_file + ".tmp", ARGS.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
