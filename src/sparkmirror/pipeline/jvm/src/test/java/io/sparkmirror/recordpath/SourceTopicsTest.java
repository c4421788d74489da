package io.sparkmirror.recordpath;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** What needs no source cluster: a re-created topic is only looked for where the query was planned with ids. */
class SourceTopicsTest {
    @Test
    void aTopicPlannedWithoutAnIdIsNotChecked() {
        SourceTopics.check(Map.of("bootstrap.servers", "localhost:1"), Map.of(), "t");
    }

    @Test
    void withoutTheSourcesAdminSettingsNothingIsChecked() {
        SourceTopics.check(null, Map.of("t", "id-1"), "t");
    }
}
