"""A local Google Cloud Storage for TensorFlow's built-in gs:// file system, in the test process.

TensorFlow 2.21's GCS file system has no endpoint setting: its URIs are constants of
libtensorflow_framework.so.2 (https://www.googleapis.com/storage/v1/ and .../upload/storage/v1/;
`strings` lists no endpoint variable among its GCS_* ones). What it does take from the
environment is libcurl's: `https_proxy`/`http_proxy` and `CURL_CA_BUNDLE`, and a bearer token
from GOOGLE_AUTH_TOKEN_FOR_TESTING (no credential lookup). So the stand-in is:

  - gcp-storage-emulator (PyPI, pure Python), an in-memory JSON API server, on 127.0.0.1;
  - a proxy on 127.0.0.1 that answers TensorFlow's `CONNECT www.googleapis.com:443` (and
    `storage.googleapis.com:443`), ends its TLS with a certificate made here for those names
    (openssl, trusted through CURL_CA_BUNDLE), and passes each request to the emulator; the
    emulator's resumable-upload URLs are http://, which arrive as plain proxy requests;
  - one patch of the emulator (2026.7.19): an empty media upload (the folder marker
    `gs://bucket/dir/` that tf.io.gfile.makedirs writes) has no data, which it cannot store.

One request a connection (the emulator answers HTTP/1.0 and closes), so the emulator serves
one request at a time. `env()` is what a subprocess needs; `upload` and `names` talk to the
emulator directly.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import socket
import ssl
import subprocess
import threading
import urllib.parse
import urllib.request
from http import server

BUCKET = 'bucket'
HOSTS = ('www.googleapis.com', 'storage.googleapis.com')


def missing() -> str | None:
    """Why the emulator cannot run here (a reason for pytest.skip), or None."""
    if importlib.util.find_spec('gcp_storage_emulator') is None:
        return ('gcp-storage-emulator is not installed (pip install gcp-storage-emulator, or '
                "pip install -e '.[test]')")
    if shutil.which('openssl') is None:
        return 'no openssl command to make the emulator\'s TLS certificate'
    return None


def _make_certificate(folder: str) -> tuple[str, str]:
    cert, key = os.path.join(folder, 'cert.pem'), os.path.join(folder, 'key.pem')
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key,
                    '-out', cert, '-days', '2', '-subj', '/CN=%s' % HOSTS[0], '-addext',
                    'subjectAltName=' + ','.join('DNS:' + h for h in HOSTS)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def _patch_empty_uploads(emulator_server) -> None:
    original = emulator_server._read_data
    if getattr(original, 'patched', False):
        return

    def read_data(handler, query):
        data = original(handler, query)
        return b'' if data is None and query.get('uploadType') == ['media'] else data
    read_data.patched = True
    emulator_server._read_data = read_data


def _read_request(sock):
    """(head, body) of one HTTP request, the body de-chunked; None at end of stream."""
    data = b''
    while b'\r\n\r\n' not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b'\r\n\r\n')
    lines = head.split(b'\r\n')
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(b':')
        fields[name.strip().lower()] = value.strip().lower()
    if fields.get(b'expect') == b'100-continue':
        sock.sendall(b'HTTP/1.1 100 Continue\r\n\r\n')
    keep = [line for line in lines if not line.lower().startswith(
        (b'expect:', b'transfer-encoding:', b'connection:', b'proxy-connection:'))]
    if b'chunked' in fields.get(b'transfer-encoding', b''):
        while not body.endswith(b'0\r\n\r\n'):
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        raw, body = body, b''
        while True:
            size, _, raw = raw.partition(b'\r\n')
            size = int(size.split(b';')[0] or b'0', 16)
            if not size:
                break
            body, raw = body + raw[:size], raw[size + 2:]
        keep = [line for line in keep if not line.lower().startswith(b'content-length:')]
        keep.append(b'Content-Length: %d' % len(body))
    else:
        length = int(fields.get(b'content-length', b'0'))
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    keep.append(b'Connection: close')
    return b'\r\n'.join(keep), body


class _Server(server.HTTPServer):
    request_queue_size = 128  # TensorFlow reads shards in parallel: their requests queue here


class GcsEmulator:
    """The emulator and its proxy (a context manager); `folder` holds the certificate."""

    def __init__(self, folder: str):
        from gcp_storage_emulator import server as emulator_server
        from gcp_storage_emulator.handlers import buckets
        from gcp_storage_emulator.storage import Storage
        _patch_empty_uploads(emulator_server)
        self.cert, key = _make_certificate(folder)
        self._tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._tls.load_cert_chain(self.cert, key)
        storage = Storage(use_memory_fs=True)
        buckets.create_bucket(BUCKET, storage)
        self._httpd = _Server(('127.0.0.1', 0), functools.partial(
            emulator_server.RequestHandler, storage))
        self.port = self._httpd.server_address[1]
        self._proxy = socket.create_server(('127.0.0.1', 0))
        self.proxy_port = self._proxy.getsockname()[1]
        self._threads = [threading.Thread(target=self._httpd.serve_forever, daemon=True),
                         threading.Thread(target=self._accept, daemon=True)]

    def __enter__(self):
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self._httpd.shutdown()
        self._httpd.server_close()
        self._proxy.close()
        return False

    def env(self) -> dict:
        """The variables that point a TensorFlow process at the emulator."""
        proxy = 'http://127.0.0.1:%d' % self.proxy_port
        return {'https_proxy': proxy, 'http_proxy': proxy, 'CURL_CA_BUNDLE': self.cert,
                'GOOGLE_AUTH_TOKEN_FOR_TESTING': 'emulator', 'NO_PROXY': '', 'no_proxy': '',
                'GCS_RETRY_CONFIG_MAX_RETRIES': '2', 'GCS_RETRY_CONFIG_INIT_DELAY_TIME_US': '1000'}

    def _accept(self):
        while True:
            try:
                client, _ = self._proxy.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        try:
            request = _read_request(client)
            if request and request[0].startswith(b'CONNECT '):
                client.sendall(b'HTTP/1.1 200 Connection established\r\n\r\n')
                client = self._tls.wrap_socket(client, server_side=True)
                request = _read_request(client)
            if request:
                client.sendall(self._forward(*request))
        except (OSError, ValueError, ssl.SSLError):
            pass
        finally:
            client.close()

    def _forward(self, head: bytes, body: bytes) -> bytes:
        first, _, rest = head.partition(b'\r\n')
        method, target, version = first.split(b' ')
        if target.startswith(b'http://'):  # a plain proxy request: keep the path
            target = b'/' + target.split(b'/', 3)[3]
        upstream = socket.create_connection(('127.0.0.1', self.port), timeout=60)
        try:
            upstream.sendall(b' '.join([method, target, version]) + b'\r\n' + rest
                             + b'\r\n\r\n' + body)
            reply = b''
            while True:
                chunk = upstream.recv(65536)
                if not chunk:
                    return reply
                reply += chunk
        finally:
            upstream.close()

    def upload(self, name: str, data: bytes) -> None:
        """Stores object `name` of the bucket (directly, no TensorFlow)."""
        url = 'http://127.0.0.1:%d/upload/storage/v1/b/%s/o?uploadType=media&name=%s' % (
            self.port, BUCKET, urllib.parse.quote(name, safe=''))
        request = urllib.request.Request(url, data=data, method='POST', headers={
            'Content-Type': 'application/octet-stream'})
        with urllib.request.urlopen(request, timeout=60) as reply:
            reply.read()

    def names(self, prefix: str = '') -> list[str]:
        """The bucket's object names under `prefix`, sorted."""
        url = 'http://127.0.0.1:%d/storage/v1/b/%s/o?prefix=%s' % (
            self.port, BUCKET, urllib.parse.quote(prefix, safe=''))
        with urllib.request.urlopen(url, timeout=60) as reply:
            items = json.loads(reply.read()).get('items', [])
        return sorted(item['name'] for item in items)

    def read(self, name: str) -> bytes:
        url = 'http://127.0.0.1:%d/storage/v1/b/%s/o/%s?alt=media' % (
            self.port, BUCKET, urllib.parse.quote(name, safe=''))
        with urllib.request.urlopen(url, timeout=60) as reply:
            return reply.read()
