# A small pytest suite with one test of each kind of result: JUnitResultsTests runs it with the real pytest and reads
# the JUnit XML it writes.
import pytest


def test_passes():
    assert 1 + 1 == 2


def test_fails():
    total = 1 + 1
    assert total == 3, "the cart total is wrong"


@pytest.fixture
def database():
    raise RuntimeError("the fixture cannot reach the database")


def test_errors_in_setup(database):
    pass


@pytest.mark.skip(reason="needs a printer")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known bug 42")
def test_expected_failure():
    assert False


class TestCheckout:
    def test_in_class(self):
        assert True


@pytest.mark.parametrize("count", [1, 2])
def test_parametrized(count):
    assert count > 0
