"""Configuration files: discovery, validation of every key, and command-line precedence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logdoctor.configfile import config_from_table, find_config, resolve
from logdoctor.errors import ConfigError
from logdoctor.model import Severity


def test_find_config_walks_up_and_prefers_logdoctor_toml(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("[tool.logdoctor]\nfail-on = 'error'\n")
    assert find_config(deep) == tmp_path / "pyproject.toml"
    (tmp_path / "a" / "logdoctor.toml").write_text("fail-on = 'info'\n")
    assert find_config(deep) == tmp_path / "a" / "logdoctor.toml"


def test_pyproject_without_section_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    assert find_config(tmp_path) in (None, *[p / "pyproject.toml" for p in tmp_path.parents])


def test_full_table() -> None:
    cfg = config_from_table(
        {
            "select": ["LD0", "loss-spike"],
            "ignore": "LD003",
            "fail-on": "error",
            "map": {"len_mean": "avg_len"},
            "steps-per-epoch": 400,
            "spikes": {"z_threshold": 8, "window": 41},
        },
        "x",
    )
    assert cfg.select == ("LD0", "loss-spike") and cfg.ignore == ("LD003",)
    assert cfg.fail_on is Severity.ERROR and cfg.steps_per_epoch == 400
    assert cfg.fields.canonical("avg_len") == "len_mean"
    assert cfg.options_for("spikes") == {"z_threshold": 8, "window": 41}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"fail_on": "error"}, "unknown key 'fail_on'"),
        ({"spike": {"z": 8}}, "unknown key 'spike'"),
        ({"integrity": {"z": 8}}, "unknown option integrity.z (known: pre_window, post_window, min_rel_jump, min_z)"),
        ({"batching": {"z": 8}}, "unknown option batching.z"),
        ({"select": ["LD9"]}, "'LD9' is not a finding code"),
        ({"fail-on": "fatal"}, "unknown severity 'fatal'"),
        ({"steps-per-epoch": 0}, "steps-per-epoch must be a positive integer"),
        ({"map": {"nonsense": "x"}}, "not a known column"),
        ({"spikes": {"window": [1]}}, "spikes.window must be an integer >= 3, got [1]"),
        ({"spikes": {"window": -5}}, "spikes.window must be an integer >= 3, got -5"),
        ({"spikes": {"window": 31.0}}, "spikes.window must be an integer >= 3, got 31.0"),
        ({"spikes": {"z_threshold": "8"}}, "spikes.z_threshold must be a number > 0, got '8'"),
        ({"spikes": {"z_threshold": True}}, "spikes.z_threshold must be a number > 0, got True"),
        ({"spikes": {"alpha": 1}}, "spikes.alpha must be a number in (0, 1), got 1"),
        ({"changepoints": {"max_blocks": 0}}, "changepoints.max_blocks must be an integer >= 1, got 0"),
        ({"batching": {"min_lag1": "high"}}, "batching.min_lag1 must be a number in [-1, 1], got 'high'"),
        ({"periodicity": {"alpha": float("nan")}}, "periodicity.alpha must be a number in (0, 1), got nan"),
        ({"nonfinite": {"x": 1}}, "unknown option nonfinite.x (known: none)"),
    ],
)
def test_bad_keys_are_named(table: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match="^cfg: .*" + re.escape(message)):
        config_from_table(table, "cfg")


def test_command_line_overrides_file(tmp_path: Path) -> None:
    cfg_file = tmp_path / "logdoctor.toml"
    cfg_file.write_text("fail-on = 'error'\nselect = ['LD1']\nsteps-per-epoch = 100\n")
    cfg = resolve(str(cfg_file), steps_per_epoch=50, select=(), fail_on=None)
    assert (cfg.fail_on, cfg.select, cfg.steps_per_epoch) == (Severity.ERROR, ("LD1",), 50)
    with pytest.raises(ConfigError, match="--ignore: 'nope'"):
        resolve(str(cfg_file), ignore=("nope",))


def test_missing_or_invalid_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        resolve(str(tmp_path / "none.toml"))
    bad = tmp_path / "logdoctor.toml"
    bad.write_text("fail-on = \n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        resolve(str(bad))
