import os

import pytest

PRICES = {"apple": 30, "pear": 45}


def total(items):
    return sum(PRICES[item] for item in items)


def test_total_of_two_items():
    assert total(["apple", "pear"]) == 75


def test_empty_cart_costs_nothing():
    assert total([]) == 0


def test_discount_rounds_down():
    # A genuine failure: the discount is not written yet.
    assert total(["pear"]) * 90 // 100 == 41


def test_payment_gateway_answers():
    # Flaky: the first attempt of every run fails, as a slow sandbox would; the retry passes.
    assert os.environ.get("ORCHESTRATE_ATTEMPT") != "1", "the payment sandbox timed out"


@pytest.mark.skip(reason="needs a receipt printer")
def test_receipt_is_printed():
    pass


@pytest.mark.parametrize("item", ["apple", "pear"])
def test_every_item_has_a_price(item):
    assert PRICES[item] > 0
