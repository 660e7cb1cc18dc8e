from pathlib import Path

import pytest

from loopline.adapters.config import InvalidSetting, Settings
from loopline.adapters.anthropic_model import AnthropicModel


def test_loopline_toml_sets_keys_and_the_environment_wins(tmp_path: Path) -> None:
    config = tmp_path / "loopline.toml"
    config.write_text('LOOPLINE_HOME = "/srv/loopline"\nLOOPLINE_KAFKA = "broker:9092"\n')

    settings = Settings.load({"LOOPLINE_KAFKA": "other:9092"}, config_file=config)

    assert settings.home == Path("/srv/loopline")
    assert settings.event_store == "sqlite:////srv/loopline/events.db"
    assert settings.kafka == "other:9092"


def test_defaults_are_the_embedded_deployment(tmp_path: Path) -> None:
    settings = Settings.load({}, config_file=tmp_path / "absent.toml")

    assert settings.home == Path(".loopline")
    assert settings.read_model == "sqlite:///.loopline/views.db"
    assert settings.kafka is None and settings.kafka_partitions == 6


def test_a_leader_stall_timeout_must_be_a_positive_number_of_seconds(tmp_path: Path) -> None:
    absent = tmp_path / "absent.toml"
    assert Settings.load({}, config_file=absent).leader_stall_timeout == 180.0
    assert Settings.load({"LOOPLINE_LEADER_STALL_TIMEOUT": "7.5"}, config_file=absent).leader_stall_timeout == 7.5
    for bad in ("0", "-3", "soon", "nan"):
        with pytest.raises(InvalidSetting, match=f"LOOPLINE_LEADER_STALL_TIMEOUT={bad!r}"):
            Settings.load({"LOOPLINE_LEADER_STALL_TIMEOUT": bad}, config_file=absent)


def test_the_connect_timeout_defaults_to_five_seconds_and_must_be_positive(tmp_path: Path) -> None:
    absent = tmp_path / "absent.toml"
    assert Settings.load({}, config_file=absent).connect_timeout == 5.0
    assert Settings.load({"LOOPLINE_CONNECT_TIMEOUT": "0.5"}, config_file=absent).connect_timeout == 0.5
    with pytest.raises(InvalidSetting, match="LOOPLINE_CONNECT_TIMEOUT='0'"):
        Settings.load({"LOOPLINE_CONNECT_TIMEOUT": "0"}, config_file=absent)


def test_an_unknown_key_in_loopline_toml_is_refused_with_the_valid_ones(tmp_path: Path) -> None:
    config = tmp_path / "loopline.toml"
    config.write_text('LOOPLINE_KAKFA = "broker:9092"\n')
    with pytest.raises(InvalidSetting, match="unknown key LOOPLINE_KAKFA; the keys are LOOPLINE_HOME, .*LOOPLINE_KAFKA,"):
        Settings.load({}, config_file=config)


def test_kafka_partitions_must_be_a_positive_whole_number(tmp_path: Path) -> None:
    with pytest.raises(InvalidSetting, match="LOOPLINE_KAFKA_PARTITIONS='six'"):
        Settings.load({"LOOPLINE_KAFKA_PARTITIONS": "six"}, config_file=tmp_path / "absent.toml")


def test_model_settings_default_to_a_current_claude_and_the_key_comes_from_the_environment_only(tmp_path: Path) -> None:
    config = tmp_path / "loopline.toml"
    config.write_text('LOOPLINE_MODEL = "claude-opus-5"\n')
    claude = Settings.load({"ANTHROPIC_API_KEY": "sk-test", "LOOPLINE_MODEL_TIMEOUT": "20", "LOOPLINE_MODEL_RETRIES": "5"},
                           config_file=config)
    offline = Settings.load({}, config_file=tmp_path / "absent.toml")

    chosen = AnthropicModel.from_settings(claude)
    assert (chosen.name, chosen.model, chosen.timeout, chosen.max_retries) == ("anthropic", "claude-opus-5", 20.0, 5)
    assert (offline.anthropic_api_key, offline.model, offline.model_timeout, offline.model_retries) == (
        None, "claude-sonnet-5-5", 60.0, 3)
    assert "sk-test" not in repr(claude)


def test_model_settings_must_be_numbers(tmp_path: Path) -> None:
    absent = tmp_path / "absent.toml"
    with pytest.raises(InvalidSetting, match="LOOPLINE_MODEL_RETRIES='a few'"):
        Settings.load({"LOOPLINE_MODEL_RETRIES": "a few"}, config_file=absent)
    with pytest.raises(InvalidSetting, match="LOOPLINE_MODEL_TIMEOUT='-1'"):
        Settings.load({"LOOPLINE_MODEL_TIMEOUT": "-1"}, config_file=absent)


def test_model_concurrency_defaults_to_16_and_must_be_a_positive_whole_number(monkeypatch: pytest.MonkeyPatch) -> None:
    from loopline.runtime.bootstrap import model_concurrency

    monkeypatch.delenv("LOOPLINE_MODEL_CONCURRENCY", raising=False)
    assert model_concurrency() == 16
    monkeypatch.setenv("LOOPLINE_MODEL_CONCURRENCY", "4")
    assert model_concurrency() == 4
    for bad in ("0", "many"):
        monkeypatch.setenv("LOOPLINE_MODEL_CONCURRENCY", bad)
        with pytest.raises(InvalidSetting, match="LOOPLINE_MODEL_CONCURRENCY"):
            model_concurrency()
