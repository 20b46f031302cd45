"""The demo's command line (scripts/demo.py): ``--port N`` chooses the api-server's port."""

from __future__ import annotations

import importlib.util
import socket
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "demo.py"


@pytest.fixture(scope="module")
def demo():
    spec = importlib.util.spec_from_file_location("demo_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("demo_script", None)


def test_the_demo_takes_a_port(demo):
    with socket.socket() as sock:  # a port the system just handed out, then released
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert demo.build_parser().parse_args(["--port", str(port)]).port == port
    assert demo.build_parser().parse_args([]).port is None  # a free one, chosen by AirflowInstance


@pytest.mark.parametrize(("value", "said"), [("http", "'http' is not a port number"), ("70000", "70000")])
def test_a_port_that_is_not_one_is_refused_naming_it(demo, capsys, value, said):
    with pytest.raises(SystemExit) as exit_:
        demo.build_parser().parse_args(["--port", value])
    assert exit_.value.code == 2 and said in capsys.readouterr().err


def test_a_port_in_use_is_refused_before_airflow_starts(demo, capsys):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(SystemExit):
            demo.build_parser().parse_args(["--port", str(port)])
    assert f"port {port} on 127.0.0.1 is not free" in capsys.readouterr().err
