from pathlib import Path

from loopline.adapters.config import Settings


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
