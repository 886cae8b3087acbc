from fractions import Fraction

import pytest

from modelplane.kube.quantity import QuantityError, is_quantity, parse_quantity


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0),
        ("1", 1),
        ("-1", -1),
        ("+2", 2),
        ("1.5", Fraction(3, 2)),
        (".5", Fraction(1, 2)),
        ("100m", Fraction(1, 10)),
        ("250u", Fraction(1, 4000)),
        ("3n", Fraction(3, 10**9)),
        ("1k", 1000),
        ("2M", 2 * 10**6),
        ("1G", 10**9),
        ("1T", 10**12),
        ("1P", 10**15),
        ("1E", 10**18),
        ("1Ki", 1024),
        ("1Mi", 2**20),
        ("20Gi", 20 * 2**30),
        ("1.5Gi", 3 * 2**29),
        ("1Ti", 2**40),
        ("1Pi", 2**50),
        ("1Ei", 2**60),
        ("1e3", 1000),
        ("1E-2", Fraction(1, 100)),
        ("12e+1", 120),
    ],
)
def test_parses_every_suffix_exactly(text: str, value: Fraction) -> None:
    assert parse_quantity(text).value == value


@pytest.mark.parametrize("text", ["", "Gi", "1Gb", "1.2.3", "x", "1 Gi", "--1", "1e", "1ki", "."])
def test_rejects_what_the_api_server_rejects(text: str) -> None:
    with pytest.raises(QuantityError, match="quantities must match the regular expression"):
        parse_quantity(text)
    assert not is_quantity(text)


def test_compares_values_not_spellings() -> None:
    assert parse_quantity("1Gi") == parse_quantity("1024Mi")
    assert parse_quantity("1G") != parse_quantity("1Gi")
    assert parse_quantity("500m").compare(parse_quantity("1")) == -1
    assert parse_quantity("2").compare(parse_quantity("1500m")) == 1


def test_sign() -> None:
    assert [parse_quantity(t).sign() for t in ("-1m", "0", "3Ki")] == [-1, 0, 1]


def test_integer_only_for_whole_int64_values() -> None:
    assert parse_quantity("1k").is_integer()
    assert parse_quantity("1k").as_integer() == 1000
    assert not parse_quantity("1.5").is_integer()
    assert not parse_quantity("10E").is_integer()  # beyond int64
    with pytest.raises(QuantityError, match="cannot convert value to integer"):
        parse_quantity("100m").as_integer()


def test_add_and_sub_take_quantities_and_ints() -> None:
    assert parse_quantity("1Gi").add(parse_quantity("1Gi")) == parse_quantity("2Gi")
    assert parse_quantity("1").sub(2).value == -1
    assert parse_quantity("500m").as_approximate_float() == 0.5


# apimachinery v0.34.0, pkg/api/resource/quantity.go, ParseQuantity: a non-zero magnitude is
# rounded up (inf.RoundUp) to nano scale, and a BinarySI amount above int64's maximum is capped.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1.0000000001", Fraction(1_000_000_001, 10**9)),
        ("0.0000000001", Fraction(1, 10**9)),
        ("-0.0000000001", Fraction(-1, 10**9)),
        ("1n", Fraction(1, 10**9)),
        ("8Ei", Fraction(2**63 - 1)),
        ("-10Ei", Fraction(-(2**63 - 1))),
        ("7Ei", Fraction(7 * 2**60)),
        ("100E", Fraction(10**20)),
    ],
)
def test_parsing_rounds_up_to_nanos_and_caps_binary_values_at_int64(
    text: str, value: Fraction
) -> None:
    assert parse_quantity(text).value == value
