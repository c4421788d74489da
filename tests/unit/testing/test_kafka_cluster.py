import base64

from sparkmirror.testing.kafka_cluster import new_cluster_id


def test_cluster_ids_never_start_with_a_dash_and_decode_to_16_bytes():
    ids = [new_cluster_id() for _ in range(5000)]  # a leading '-' would otherwise appear about 80 times
    assert not any(i.startswith("-") for i in ids)
    assert all(len(base64.urlsafe_b64decode(i + "==")) == 16 for i in ids)
    assert len(set(ids)) == len(ids)


def test_free_ports_are_distinct_and_never_handed_out_twice():
    from sparkmirror.testing.kafka_cluster import free_port, free_ports

    first = free_ports(2)
    later = [p for _ in range(50) for p in free_ports(2)] + [free_port() for _ in range(50)]
    everything = first + later
    assert len(first) == 2 and len(everything) == 2 + 50 * 2 + 50
    assert len(set(everything)) == len(everything)
