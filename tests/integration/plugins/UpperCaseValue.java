package com.example.shaping;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.transforms.Transformation;

/**
 * A user's own transform for the transforms tests, put on MM2's plugin.path as a jar the test compiles: the value,
 * read as UTF-8, in upper case, with the `suffix` setting appended.
 */
public class UpperCaseValue<R extends ConnectRecord<R>> implements Transformation<R> {
    private String suffix = "";

    @Override
    public void configure(Map<String, ?> configs) {
        Object s = configs.get("suffix");
        suffix = s == null ? "" : s.toString();
    }

    @Override
    public R apply(R record) {
        if (record.value() == null) {
            return record;
        }
        String text = new String((byte[]) record.value(), StandardCharsets.UTF_8).toUpperCase(Locale.ROOT) + suffix;
        return record.newRecord(record.topic(), record.kafkaPartition(), record.keySchema(), record.key(),
                                record.valueSchema(), text.getBytes(StandardCharsets.UTF_8), record.timestamp(),
                                record.headers());
    }

    @Override
    public ConfigDef config() {
        return new ConfigDef().define("suffix", ConfigDef.Type.STRING, "", ConfigDef.Importance.LOW, "appended");
    }

    @Override
    public void close() {
    }
}
