"""`mechinit zoo list`'s text: aliases fitted whole, shortest first."""

from mechinit.zoo.listing import fit_aliases


def test_aliases_are_fitted_whole_and_shortest_first():
    assert fit_aliases("paper-g0.8-replay-avx2,small-init", 14) == "small-init +1"
    assert fit_aliases("b,aaaa,cc", 7) == "b,cc +1"
    assert fit_aliases("b,aaaa,cc", 9) == "b,aaaa,cc"  # fits as given: order kept
    assert fit_aliases("cpu-large-init-s1", 14) == "cpu-large-ini…"  # one name longer than the room: cut
    assert fit_aliases(None, 14) is None
