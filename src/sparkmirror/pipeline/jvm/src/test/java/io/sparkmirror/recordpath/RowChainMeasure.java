package io.sparkmirror.recordpath;

import static io.sparkmirror.recordpath.Stages.spec;
import static io.sparkmirror.recordpath.Stages.stage;
import static io.sparkmirror.recordpath.Stages.when;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

/**
 * A measurement to run by hand, not a test (it asserts nothing): ns per record of TargetRecords without a chain,
 * and with DropHeaders(ssn) + Filter(HasHeaderKey skip) on Connect's objects and on the bytes, for 1 KiB values
 * with two headers. {@code java -cp <the tests' classpath> io.sparkmirror.recordpath.RowChainMeasure [records
 * [path...]]}, paths {@code none}, {@code connect}, {@code bytes} (all, in turn, by default; one per JVM keeps the
 * others' garbage and call profiles out of its figure).
 */
final class RowChainMeasure {
    private static final int ROUNDS = 9;  // the first three warm the JIT up; the median of the rest is printed

    private RowChainMeasure() {
    }

    public static void main(String[] args) {
        int records = args.length > 0 ? Integer.parseInt(args[0]) : 500_000;
        Row[] rows = rows(1024);
        List<Map<String, Object>> stages = List.of(
            stage("drop", "DropHeaders", Map.of("headers", "ssn", "type", "DropHeaders")),
            when(stage("skip", "Filter", Map.of("type", "Filter")), "marked", "HasHeaderKey",
                 Map.of("name", "skip", "type", "HasHeaderKey"), false));
        TransformStep connect = new TransformStep(new ConnectRowChain(Stages.chain(stages)), false, "A");
        TransformStep bytes = TransformStep.of(spec(stages, "none"));
        Map<String, TargetRecords> all = Map.of("none", new TargetRecords(null, null, null),
                                                "connect", new TargetRecords(null, connect, null),
                                                "bytes", new TargetRecords(null, bytes, null));
        String[] names = args.length > 1 ? Arrays.copyOfRange(args, 1, args.length)
            : new String[] {"none", "connect", "bytes"};
        TargetRecords[] paths = Arrays.stream(names).map(all::get).toArray(TargetRecords[]::new);
        long[][] ns = new long[paths.length][ROUNDS];
        long sink = 0;
        for (int round = 0; round < ROUNDS; round++) {
            for (int path = 0; path < paths.length; path++) {
                TaskPartition p = new TaskPartition(null, new PartitionLog("t", 0, "A.t"), -1L, -1L, 100);
                long start = System.nanoTime();
                for (int i = 0; i < records; i++) {
                    Row row = rows[i & (rows.length - 1)];
                    ProducerRecord<byte[], byte[]> out = paths[path].of(row, p, "t", i, 0, 1_000L,
                                                                         SourceRow.key(row), SourceRow.value(row));
                    sink += out.headers().toArray().length + out.value().length;
                }
                ns[path][round] = System.nanoTime() - start;
            }
        }
        for (int path = 0; path < paths.length; path++) {
            long[] measured = Arrays.copyOfRange(ns[path], 3, ROUNDS);
            Arrays.sort(measured);
            System.out.printf("%-8s %6.0f ns/record (median of %d rounds of %d)%n", names[path],
                              (double) measured[measured.length / 2] / records, measured.length, records);
        }
        System.out.println("(sink " + sink + ")");
    }

    /** Rows of 1 KiB values with a 16-byte key and two headers, ssn and trace, none marked skip. */
    private static Row[] rows(int n) {
        Random random = new Random(1L);
        Row[] out = new Row[n];
        for (int i = 0; i < n; i++) {
            byte[] key = new byte[16];
            byte[] value = new byte[1024];
            random.nextBytes(key);
            random.nextBytes(value);
            out[i] = RowFactory.create("t", 0, (long) i, 1_000L, key, value,
                                       Rows.headers(Rows.header("ssn", "123-45-" + i), Rows.header("trace", "t" + i)));
        }
        return out;
    }
}
