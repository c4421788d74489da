"""Config providers resolved at load time, as Kafka's FileConfigProvider, DirectoryConfigProvider and
EnvVarConfigProvider do; every bad reference is a problem naming the key."""

from sparkmirror.config import keys
from sparkmirror.config.providers import resolve_providers

PROVIDERS = {
    "config.providers": "file, dir, env",
    "config.providers.file.class": keys.FILE_CONFIG_PROVIDER,
    "config.providers.dir.class": keys.DIRECTORY_CONFIG_PROVIDER,
    "config.providers.env.class": keys.ENV_VAR_CONFIG_PROVIDER,
}


def test_file_directory_and_env_references_resolve(tmp_path):
    (tmp_path / "creds.properties").write_text("user = alice\npassword = p\\=w:d\n")
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\nabc\n")
    values = {**PROVIDERS,
              "jaas": f'user="${{file:{tmp_path}/creds.properties:user}}" '
                      f'pw="${{file:{tmp_path}/creds.properties:password}}"',
              "ca": f"${{dir:{tmp_path}/certs:ca.pem}}",
              "host": "${env:HOST}:9092",
              "plain": "no references"}
    resolved = resolve_providers(values, env={"HOST": "kafka-1"})
    assert resolved.problems == ()
    assert resolved.values["jaas"] == 'user="alice" pw="p=w:d"'
    assert resolved.values["ca"] == "-----BEGIN CERTIFICATE-----\nabc\n"
    assert resolved.values["host"] == "kafka-1:9092"
    assert resolved.secret_keys == {"jaas", "ca", "host"}
    assert resolved.values["config.providers.file.class"] == keys.FILE_CONFIG_PROVIDER


def test_missing_key_file_and_variable_are_problems(tmp_path):
    (tmp_path / "c.properties").write_text("user = alice\n")
    values = {**PROVIDERS, "a": f"${{file:{tmp_path}/c.properties:nope}}", "b": "${file:/no/such/file:x}",
              "c": "${env:UNSET}", "d": "${env:some/path:VAR}", "e": "${file:key-without-path}"}
    problems = dict(resolve_providers(values, env={}).problems)
    assert problems["a"] == f"key 'nope' is not in {tmp_path}/c.properties (config provider 'file')"
    assert problems["b"] == "cannot read /no/such/file: No such file or directory"
    assert problems["c"] == "environment variable 'UNSET' is not set"
    assert "take no path" in problems["d"]
    assert problems["e"] == "'${file:<path>:key-without-path}' needs a path"


def test_unlisted_provider_and_unknown_class_are_problems():
    values = {"config.providers": "vault", "config.providers.vault.class": "com.example.VaultConfigProvider",
              "x": "${vault:secret/kafka:password}", "y": "${other:k}"}
    problems = dict(resolve_providers(values, env={}).problems)
    assert "cannot be used here" in problems["config.providers.vault.class"]
    assert problems["x"].startswith("'${vault:...}' names config provider 'vault'")
    assert problems["y"].startswith("'${other:...}' names config provider 'other'")


def test_allowlist_and_allowed_paths_params_are_enforced(tmp_path):
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "f.properties").write_text("k = v\n")
    (tmp_path / "other.properties").write_text("k = v\n")
    values = {**PROVIDERS, "config.providers.env.param.allowlist.pattern": "MM2_.*",
              "config.providers.file.param.allowed.paths": str(tmp_path / "ok"),
              "good": f"${{file:{tmp_path}/ok/f.properties:k}}", "bad": f"${{file:{tmp_path}/other.properties:k}}",
              "sneaky": f"${{file:{tmp_path}/ok/../other.properties:k}}",
              "env_ok": "${env:MM2_X}", "env_blocked": "${env:HOME}"}
    resolved = resolve_providers(values, env={"MM2_X": "1", "HOME": "/root"})
    problems = dict(resolved.problems)
    assert resolved.values["good"] == "v" and resolved.values["env_ok"] == "1"
    assert "outside config.providers.file.param.allowed.paths" in problems["bad"]
    assert "outside" in problems["sneaky"]
    assert "not allowed by config.providers.env.param.allowlist.pattern" in problems["env_blocked"]
    assert "/root" not in str(resolved.problems)


def test_values_without_references_are_untouched():
    values = {"topics": "a.*, b", "weird": "${ not a reference", "config.providers": ""}
    resolved = resolve_providers(values, env={})
    assert resolved.values == values and resolved.problems == () and resolved.secret_keys == frozenset()
