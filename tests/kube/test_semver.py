import pytest

from modelplane.kube.semver import SemverError, is_semver, parse_semver


def test_parses_a_strict_version() -> None:
    v = parse_semver("1.2.3-rc.1+build.5")
    assert (v.major, v.minor, v.patch, v.pre, v.build) == (1, 2, 3, ("rc", "1"), ("build", "5"))


@pytest.mark.parametrize("text", ["1.2", "v1.2.3", "01.2.3", "1.2.3-", "1.2.3-01", "x"])
def test_rejects_non_strict_versions(text: str) -> None:
    with pytest.raises(SemverError):
        parse_semver(text)
    assert not is_semver(text)


@pytest.mark.parametrize(
    ("text", "normal"), [("v1.2", "1.2.0"), ("1", "1.0.0"), ("01.02.3", "1.2.3")]
)
def test_normalize_accepts_loose_versions(text: str, normal: str) -> None:
    assert str(parse_semver(text, normalize=True)) == normal


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("1.0.0", "2.0.0"),
        ("1.9.0", "1.10.0"),
        ("1.0.0-alpha", "1.0.0"),
        ("1.0.0-alpha", "1.0.0-alpha.1"),
        ("1.0.0-alpha.1", "1.0.0-alpha.beta"),
        ("1.0.0-beta.2", "1.0.0-beta.11"),
        ("1.0.0-rc.1", "1.0.0"),
    ],
)
def test_precedence_follows_semver(lower: str, higher: str) -> None:
    assert parse_semver(lower).compare(parse_semver(higher)) == -1
    assert parse_semver(higher).compare(parse_semver(lower)) == 1


def test_build_metadata_does_not_change_precedence() -> None:
    assert parse_semver("1.0.0+a").compare(parse_semver("1.0.0+b")) == 0
