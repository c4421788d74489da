package io.sparkmirror.recordpath;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.spark.sql.Row;

/**
 * A chain of stages that only drop headers or the record, run on the record's bytes: what Connect's DropHeaders and
 * Filter, under Connect's own predicates, do to a SourceRecord, without building one (NativeStages makes it, only
 * for such chains). Key, value, topic, partition and timestamp pass unchanged, as they do through those classes
 * and ByteArrayConverter; headers keep their order. Stateful only in a {@link Condition}'s cache: one task's.
 */
final class NativeRowChain implements RowChain {
    /** A predicate on what Connect's own predicates read: the record's topic (the remote one), value and headers. */
    interface Condition {
        boolean holds(String topic, byte[] value, List<Header> headers);
    }

    /** A stage: Filter when {@code dropped} is null, else DropHeaders of those names; under {@code when} (or
     * always), negated by {@code negate} as Connect does. */
    static final class Stage {
        final Condition when;
        final boolean negate;
        final Set<String> dropped;

        Stage(Condition when, boolean negate, Set<String> dropped) {
            this.when = when;
            this.negate = negate;
            this.dropped = dropped;
        }
    }

    private final Stage[] stages;
    private final TransformChain connect;  // made to check the settings as Connect does; closed with this chain

    NativeRowChain(List<Stage> stages, TransformChain connect) {
        this.stages = stages.toArray(new Stage[0]);
        this.connect = connect;
    }

    /** Never fails but where the Connect path fails too: a header without a name (RecordHeader, as ConnectHeader,
     * refuses it). */
    @Override
    public ProducerRecord<byte[], byte[]> apply(Map<String, Object> sourcePartition, String topic, long offset,
                                                String remoteTopic, int partition, long timestamp, byte[] key,
                                                byte[] value, List<Row> rows, byte[] provenance) {
        int n = rows == null ? 0 : rows.size();
        List<Header> headers = new ArrayList<>(n + 1);  // room for the provenance header
        for (int i = 0; i < n; i++) {
            headers.add(SourceRow.header(rows.get(i)));
        }
        for (Stage stage : stages) {
            if (stage.when == null || stage.negate ^ stage.when.holds(remoteTopic, value, headers)) {
                if (stage.dropped == null) {
                    return null;
                }
                drop(headers, stage.dropped);
            }
        }
        return RowChain.written(remoteTopic, partition, timestamp, key, value, headers, provenance);
    }

    /** DropHeaders: every header of those names goes, the others keep their order. */
    private static void drop(List<Header> headers, Set<String> names) {
        int kept = 0;
        for (int i = 0; i < headers.size(); i++) {
            Header h = headers.get(i);
            if (!names.contains(h.key())) {
                headers.set(kept++, h);
            }
        }
        for (int last = headers.size() - 1; last >= kept; last--) {
            headers.remove(last);
        }
    }

    @Override
    public void close() {
        connect.close();
    }
}
