"""A command checks every option before it reads or runs anything: a bad value costs no run, and
its one-line error names the option, not the input it never got to."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgauge.cli import main


def test_plan_refuses_a_small_grid_before_it_reads_its_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "never-written.json"
    code = main(["plan", str(missing), "--machine", "1GiB", "--grid", "8"])
    err = capsys.readouterr().err
    assert code == 64, err
    assert "--grid must be at least 16 bins" in err and "never-written" not in err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--margin", "ten"], "--margin takes a percentage such as 10%, not 'ten'"),
        (["--margin", "100%"], "--margin must be at least 0% and below 100%"),
        (["--tolerance", "60%"], "--tolerance must be at least 0% and below 50%"),
        (["--timeout", "0s"], "--timeout must be positive"),
    ],
)
def test_fit_refuses_each_bad_value_with_its_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    script = tmp_path / "s.py"
    script.write_text("N = 1\n")
    code = main(["fit", "--param", "N", "--budget", "rss=1GiB", *argv, str(script)])
    err = capsys.readouterr().err
    assert code == 64, err
    assert said in err


def test_sweep_and_fit_name_what_they_miss_to_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "--param", "N=1,2"]) == 64
    assert "nothing to run: give a script or -m MODULE (or --load RECORD.json)" in capsys.readouterr().err
    assert main(["fit", "--param", "N", "--budget", "rss=1GiB"]) == 64
    assert "nothing to run: give a script or -m MODULE" in capsys.readouterr().err
