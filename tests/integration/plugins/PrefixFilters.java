package com.example.naming;

import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.mirror.ConfigPropertyFilter;
import org.apache.kafka.connect.mirror.GroupFilter;
import org.apache.kafka.connect.mirror.TopicFilter;

/**
 * A company's rules, for the tests: topics and groups replicate when their names start with the flow's
 * `acme.prefix` (which must be set), and every topic config is copied except `retention.ms`.
 */
public class PrefixFilters implements TopicFilter, GroupFilter, ConfigPropertyFilter {
    private String prefix;

    @Override
    public void configure(Map<String, ?> configs) {
        Object value = configs.get("acme.prefix");
        if (value == null) {
            throw new ConfigException("acme.prefix is required by PrefixFilters");
        }
        prefix = value.toString();
    }

    @Override
    public boolean shouldReplicateTopic(String topic) {
        return topic.startsWith(prefix);
    }

    @Override
    public boolean shouldReplicateGroup(String group) {
        return group.startsWith(prefix);
    }

    @Override
    public boolean shouldReplicateConfigProperty(String prop) {
        return !prop.equals("retention.ms");
    }

    @Override
    public void close() {
    }
}
