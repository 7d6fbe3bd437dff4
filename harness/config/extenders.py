"""The configuration's `extenders` checked as kube-scheduler's scheduler.New meets them
(buildExtenders, NewHTTPExtender, makeTransport): client-go's TLS settings, the URL Go would
parse, the timeout. Here, in the configuration's loading, because upstream fails there before
any scheduling; harness.scheduler.extender builds the transports with the same functions."""

from __future__ import annotations

import json
import os
import ssl
import tempfile
from typing import Any, List, Mapping, Optional, Tuple

from ..api.duration import parse_duration_ns
from .validation import invalid


def _read_tls_file(data: Any, path: Any, key: str) -> bytes:
    """dataFromSliceOrFile: the data if given, else the file's content (os.ReadFile; its error
    names the path, never the content). A file a case names must lie in its tree (trust)."""
    if data:
        return _pem(data).encode()
    if path:
        from ..trust import check_open

        check_open(str(path), key)
        try:
            with open(str(path), "rb") as f:
                return f.read(1 << 20)
        except OSError as e:
            raise ValueError(f"open {path}: {(e.strerror or str(e)).lower()}") from None
    return b""


def tls_config_for(tls: Mapping[str, Any], enable_https: bool, key: str = "tlsConfig") -> Optional[ssl.SSLContext]:
    """makeTransport and client-go's TLSConfigFor over the extender's tlsConfig: None when
    nothing asks for TLS settings; with enableHTTPS and no CA, Insecure; a CA with insecure is
    refused; the CA, cert and key read (loadTLSFiles) and parsed. Raises ValueError with
    client-go's words."""
    tls = tls or {}
    has_ca = bool(tls.get("caFile") or tls.get("caData"))
    insecure = bool(tls.get("insecure")) or (enable_https and not has_ca)
    has_cert = bool(tls.get("certFile") or tls.get("certData")) and bool(tls.get("keyFile") or tls.get("keyData"))
    if not (has_ca or has_cert or insecure or tls.get("serverName")):
        return None
    if has_ca and insecure:
        raise ValueError("specifying a root certificates file with the insecure flag is not allowed")
    ca = _read_tls_file(tls.get("caData"), tls.get("caFile"), f"{key}.caFile")
    cert = _read_tls_file(tls.get("certData"), tls.get("certFile"), f"{key}.certFile")
    keydata = _read_tls_file(tls.get("keyData"), tls.get("keyFile"), f"{key}.keyFile")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2  # TLSConfigFor's MinVersion
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif ca:
        try:
            ctx.load_verify_locations(cadata=ca.decode("ascii", errors="replace"))
        except (ssl.SSLError, ValueError):
            raise ValueError("unable to load root certificates: unable to parse bytes as PEM block") from None
    else:
        ctx.load_default_certs()
    if has_cert:
        tmp: List[str] = []
        try:
            ctx.load_cert_chain(_temp_pem(cert.decode("ascii", errors="replace"), tmp),
                                _temp_pem(keydata.decode("ascii", errors="replace"), tmp))
        except (ssl.SSLError, ValueError):
            raise ValueError("tls: failed to find any PEM data in certificate input") from None
        finally:
            for p in tmp:
                os.unlink(p)
    return ctx


def _pem(data: Any) -> str:
    """certData / keyData / caData: []byte in the configuration (base64 in YAML), or PEM text."""
    import base64

    if isinstance(data, bytes):
        return data.decode()
    text = str(data)
    if "-----BEGIN" in text:
        return text
    try:
        return base64.b64decode(text, validate=True).decode("ascii", errors="replace")
    except ValueError:
        raise ValueError("illegal base64 data") from None


def _temp_pem(text: str, tmp: List[str]) -> str:
    fd, path = tempfile.mkstemp(suffix=".pem")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    tmp.append(path)
    return path


def timeout_seconds(timeout: Any) -> float:
    """httpTimeout (a Go duration, or seconds) in seconds; 0 for unset. Raises ValueError."""
    if timeout in (None, "", 0):
        return 0.0
    if isinstance(timeout, str):
        return parse_duration_ns(timeout) / 1e9
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise ValueError(f"not a duration: {type(timeout).__name__}")
    return float(timeout)


def go_url_error(raw: str) -> Optional[str]:
    """What net/url.Parse (then http.Client.Do) says of `raw`, or None: the checks that matter
    for an extender's URL (control characters, escapes, scheme, IPv6 brackets, port, host)."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        return f"parse {json.dumps(raw)}: net/url: invalid control character in URL"
    for i, c in enumerate(raw):
        if c == "%" and not all(x in "0123456789abcdefABCDEF" for x in raw[i + 1:i + 3].ljust(2, "g")):
            return f"parse {json.dumps(raw)}: invalid URL escape {json.dumps(raw[i:i + 3])}"
    scheme, sep, rest = raw.partition(":")
    if raw.startswith(":"):
        return f"parse {json.dumps(raw)}: missing protocol scheme"
    if not sep or not scheme[:1].isalpha() or not all(c.isalnum() or c in "+-." for c in scheme):
        if ":" in raw.split("/")[0]:
            return f"parse {json.dumps(raw)}: first path segment in URL cannot contain colon"
        return f'unsupported protocol scheme ""'
    if scheme.lower() not in ("http", "https"):
        return f"unsupported protocol scheme {json.dumps(scheme.lower())}"
    authority = rest[2:].split("/")[0].split("?")[0].split("#")[0] if rest.startswith("//") else ""
    host = authority.rpartition("@")[2]
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return f"parse {json.dumps(raw)}: missing ']' in host"
        port = host[end + 1:]
        if port and (not port.startswith(":") or not port[1:].isdigit() and port != ":"):
            return f"parse {json.dumps(raw)}: invalid port {json.dumps(port)} after host"
    elif ":" in host:
        port = host[host.rindex(":"):]
        if port != ":" and not port[1:].isdigit():
            return f"parse {json.dumps(raw)}: invalid port {json.dumps(port)} after host"
    if not host or host.startswith(":"):
        return "http: no Host in request URL"
    return None


def extender_config_errors(config: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """What buildExtenders / NewHTTPExtender / makeTransport would fail on, found when the
    configuration is loaded: client-go's TLS checks (a CA with insecure, a file that cannot be
    read, PEM that does not parse) as `couldn't build extenders: <client-go's words>`; an
    urlPrefix Go cannot parse or send to, and a negative httpTimeout (kube-scheduler would run
    every call without a deadline), which kube-scheduler only meets at each call, as
    field.Invalid errors. (field path, message) pairs, as the configuration's validation."""
    errors: List[Tuple[str, str]] = []
    for i, ext in enumerate(config.get("extenders") or []):
        if not isinstance(ext, Mapping):
            continue
        key = f"extenders[{i}]"
        url = str(ext.get("urlPrefix") or "")
        problem = go_url_error(url.rstrip("/") + "/" + str(ext.get("filterVerb") or "filter"))
        if problem:
            errors.append(invalid(f"{key}.urlPrefix", url, problem))
        try:
            if timeout_seconds(ext.get("httpTimeout")) < 0:
                errors.append(invalid(f"{key}.httpTimeout", ext.get("httpTimeout"),
                                      "must not be negative (kube-scheduler would then call the "
                                      "extender without any timeout)"))
        except ValueError as e:
            errors.append(invalid(f"{key}.httpTimeout", ext.get("httpTimeout"), str(e)))
        try:
            tls_config_for(ext.get("tlsConfig") or {}, bool(ext.get("enableHTTPS")), f"{key}.tlsConfig")
        except (ValueError, ssl.SSLError, OSError) as e:
            errors.append((f"{key}.tlsConfig", f"couldn't build extenders: {e}"))
    return errors
