from sparkmirror.policy.provenance import ProvenanceRule, provenance_chain


def test_a_local_record_gets_its_source_and_a_record_never_returns_to_a_cluster_it_passed():
    a_to_b, b_to_a, b_to_c = ProvenanceRule("A", "B"), ProvenanceRule("B", "A"), ProvenanceRule("B", "C")
    assert a_to_b.stamp == b"A"
    assert a_to_b.next_value(None) == b"A"
    assert b_to_a.next_value(b"A") is None  # came from A: active/active must not send it back
    assert b_to_c.next_value(b"A") == b"A,B"
    assert ProvenanceRule("C", "A").next_value(b"A,B") is None


def test_the_chain_tolerates_empty_and_odd_values():
    assert provenance_chain(None) == provenance_chain(b"") == ()
    assert provenance_chain(b"A,,B") == ("A", "B")
    assert ProvenanceRule("B", "C").next_value(b"A,B") == b"A,B"  # the source is not repeated
