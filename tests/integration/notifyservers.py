# SPDX-License-Identifier: GPL-2.0-or-later
"""Real servers for the notification tests, each a process of its own on
127.0.0.1 that the test starts, stops and starts again: an SMTP server
(Debian's aiosmtpd) that requires STARTTLS and AUTH, and an HTTPS receiver
(the standard library's http.server behind TLS) for web hooks, ntfy and
Gotify.  Both write what they receive as JSON lines to a file; a server
says it listens by a line on its stdout, which the test reads."""
import json
import os
import socket
import subprocess

from kdtest import TIMEOUT

# Debian's python3, whose modules (aiosmtpd) the package installs: the
# python3 on PATH may be another one
PYTHON = "/usr/bin/python3"

SMTP_SERVER = r'''
import json, ssl, sys, time
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
port, cert, key, log, user, password = sys.argv[1:7]
ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
ctx.load_cert_chain(cert, key)

def auth(server, session, envelope, mechanism, data):
    ok = (isinstance(data, LoginPassword) and data.login.decode() == user
          and data.password.decode() == password)
    return AuthResult(success=ok, auth_data=data.login.decode() if ok else None)

class Handler:
    async def handle_DATA(self, server, session, envelope):
        with open(log, "a") as f:
            f.write(json.dumps({"from": envelope.mail_from, "to": envelope.rcpt_tos,
                                "tls": session.ssl is not None,
                                "login": session.auth_data,
                                "data": envelope.content.decode("utf-8", "replace")}) + "\n")
        return "250 2.0.0 Ok: queued as T%d" % int(time.time() * 1000)

c = Controller(Handler(), hostname="127.0.0.1", port=int(port), tls_context=ctx,
               require_starttls=True, authenticator=auth, auth_require_tls=True)
c.start()
print("ready", flush=True)
sys.stdin.read()
c.stop()
'''

HTTPS_SERVER = r'''
import http.server, json, ssl, sys
port, cert, key, log = sys.argv[1:5]

class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(log, "a") as f:
            f.write(json.dumps({"path": self.path, "headers": dict(self.headers.items()),
                                "body": body.decode("utf-8", "replace")}) + "\n")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"id":1}\n')
    def log_message(self, *a):
        pass

srv = http.server.HTTPServer(("127.0.0.1", int(port)), H)
ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print("ready", flush=True)
srv.serve_forever()
'''


def aiosmtpd_available():
    return subprocess.run([PYTHON, "-c", "import aiosmtpd"], capture_output=True).returncode == 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One of the two, by its script; started and stopped by the test."""

    def __init__(self, scratch, name, script, args):
        self.port = free_port()
        self.log = scratch.path(name + ".jsonl")
        self.script = scratch.path(name + ".py")
        with open(self.script, "w") as f:
            f.write(script)
        self.args = args
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([PYTHON, self.script, str(self.port)] + self.args(self),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()  # "ready" once it listens, or EOF
        if line.strip() != "ready":
            raise AssertionError("%s did not start: %r" % (self.script, line))
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(TIMEOUT)
        for f in (self.proc.stdin, self.proc.stdout) if self.proc else ():
            f.close()
        self.proc = None

    def received(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [json.loads(l) for l in f if l.strip()]


def smtp_server(scratch, cert, user, password):
    return Server(scratch, "smtp", SMTP_SERVER,
                  lambda s: [cert[1], cert[0], s.log, user, password])


def https_server(scratch, cert):
    return Server(scratch, "https", HTTPS_SERVER, lambda s: [cert[1], cert[0], s.log])
