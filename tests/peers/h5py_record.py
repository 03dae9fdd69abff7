"""h5py_record.py: a pytest plugin that records each test's outcome as it finishes, one line each, flushed
at once, so that a test that takes the interpreter down is known by its START without an END.

Loaded by h5py_suite.py with `-p h5py_record`; writes to the file named by H5ZARR_PEER_RECORD:
    START <nodeid>
    END <nodeid> <passed|failed|skipped|xfailed>
"""
import os

_out = None
_state = {}


def _write(line):
    global _out
    if _out is None:
        _out = open(os.environ["H5ZARR_PEER_RECORD"], "a", buffering=1)
    _out.write(line + "\n")
    _out.flush()


def pytest_runtest_logstart(nodeid, location):
    _state[nodeid] = "passed"
    _write("START " + nodeid)


def pytest_runtest_logreport(report):
    cur = _state.get(report.nodeid, "passed")
    if report.failed:
        cur = "failed"
    elif report.skipped and cur != "failed":
        cur = "xfailed" if hasattr(report, "wasxfail") else "skipped"
    _state[report.nodeid] = cur


def pytest_runtest_logfinish(nodeid, location):
    _write("END %s %s" % (nodeid, _state.pop(nodeid, "passed")))
