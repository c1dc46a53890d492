import pytest
from twtest import run_cli


@pytest.fixture
def cli():
    return run_cli
