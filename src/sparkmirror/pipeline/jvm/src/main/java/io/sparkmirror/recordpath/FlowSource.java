package io.sparkmirror.recordpath;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The flow source: {@code spark.readStream.format("io.sparkmirror.recordpath.FlowSource")}, rows in the shape of Spark's
 * Kafka source with headers, read by a few tasks of many partitions each (see {@link SourceStream}).
 */
public final class FlowSource implements TableProvider {
    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return schema();
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return new SourceTable();
    }

    /** Spark's Kafka source's columns with includeHeaders. */
    static StructType schema() {
        return new StructType()
            .add("key", DataTypes.BinaryType)
            .add("value", DataTypes.BinaryType)
            .add("topic", DataTypes.StringType)
            .add("partition", DataTypes.IntegerType)
            .add("offset", DataTypes.LongType)
            .add("timestamp", DataTypes.TimestampType)
            .add("timestampType", DataTypes.IntegerType)
            .add("headers", headers());
    }

    /** Kafka's headers as Spark's Kafka source gives them: an array of (key, value), in order. */
    static org.apache.spark.sql.types.ArrayType headers() {
        return DataTypes.createArrayType(new StructType()
            .add("key", DataTypes.StringType).add("value", DataTypes.BinaryType));
    }

    private static final class SourceTable implements SupportsRead {
        @Override
        public String name() {
            return "sparkmirror flow source";
        }

        @Override
        public StructType schema() {
            return FlowSource.schema();
        }

        @Override
        public Set<TableCapability> capabilities() {
            return EnumSet.of(TableCapability.MICRO_BATCH_READ);
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
            Map<String, String> given = options.asCaseSensitiveMap();
            return () -> new Scan() {
                @Override
                public StructType readSchema() {
                    return FlowSource.schema();
                }

                @Override
                public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
                    return new SourceStream(given);
                }
            };
        }
    }
}
