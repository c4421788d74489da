package io.sparkmirror.recordpath;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;

/** What one task of the flow source reads (shipped to the executor): its partitions' ranges and the consumer's
 * settings. */
final class SourceTask implements InputPartition {
    private static final long serialVersionUID = 1L;

    final ArrayList<SourceRanges.Range> ranges;
    final HashMap<String, Object> consumerConfig;
    final long pollMs;
    final long stallMs;
    final boolean realTime;  // Real-Time Mode: the ranges have no end
    final Batching batching;  // Real-Time Mode: when and how to batch fetches (FetchPace); null: never

    /** Batched fetches' consumer settings, used above {@code above} polls with records a second. */
    record Batching(int above, HashMap<String, Object> consumerConfig) implements java.io.Serializable {
    }

    SourceTask(List<SourceRanges.Range> ranges, Map<String, Object> consumerConfig, long pollMs, long stallMs,
               boolean realTime, Batching batching) {
        this.ranges = new ArrayList<>(ranges);
        this.consumerConfig = new HashMap<>(consumerConfig);
        this.pollMs = pollMs;
        this.stallMs = stallMs;
        this.realTime = realTime;
        this.batching = realTime ? batching : null;
    }

    /** Makes each task's reader. */
    static final class Readers implements PartitionReaderFactory {
        private static final long serialVersionUID = 1L;

        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            return new SourceReader((SourceTask) partition);
        }
    }
}
