package io.sparkmirror.recordpath;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.source.SourceRecord;

/** A user's transform and predicate (loaded by their class names) that note being closed. */
final class Closing {
    static final List<String> CLOSED = new CopyOnWriteArrayList<>();

    private Closing() {
    }

    public static final class Transform implements org.apache.kafka.connect.transforms.Transformation<SourceRecord> {
        @Override
        public SourceRecord apply(SourceRecord record) {
            return record;
        }

        @Override
        public ConfigDef config() {
            return new ConfigDef();
        }

        @Override
        public void close() {
            CLOSED.add("transform");
        }

        @Override
        public void configure(Map<String, ?> configs) {
        }
    }

    public static final class Predicate
            implements org.apache.kafka.connect.transforms.predicates.Predicate<SourceRecord> {
        @Override
        public boolean test(SourceRecord record) {
            return true;
        }

        @Override
        public ConfigDef config() {
            return new ConfigDef();
        }

        @Override
        public void close() {
            CLOSED.add("predicate");
        }

        @Override
        public void configure(Map<String, ?> configs) {
        }
    }
}
