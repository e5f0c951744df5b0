"""The `cairn` command runs numpy's BLAS on one thread unless the user chose a number: the dense
scans are no faster on two here, and a spinning second thread takes a core from the rest of a
recall (docs/benchmarks.md, issue 18's seventh round)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

_PROBE = (
    "import json, cairn.adapters.cli, numpy, threadpoolctl; "
    "print(json.dumps([p['num_threads'] for p in threadpoolctl.threadpool_info() "
    "if p['user_api'] == 'blas']))"
)


def _blas_threads(environment: dict[str, str]) -> list[int]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], env=environment, capture_output=True, text=True, check=True
    )
    threads: list[int] = json.loads(done.stdout)
    return threads


def test_the_command_uses_one_blas_thread_by_default() -> None:
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    threads = _blas_threads(environment)
    assert threads and all(count == 1 for count in threads)


def test_a_number_the_user_set_is_kept() -> None:
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: OpenBLAS runs one thread whatever is asked")
    threads = _blas_threads({**os.environ, "OPENBLAS_NUM_THREADS": "2"})
    assert threads and all(count == 2 for count in threads)
