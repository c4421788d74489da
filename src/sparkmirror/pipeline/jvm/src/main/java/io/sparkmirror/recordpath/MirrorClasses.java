package io.sparkmirror.recordpath;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.connect.mirror.ConfigPropertyFilter;
import org.apache.kafka.connect.mirror.GroupFilter;
import org.apache.kafka.connect.mirror.ReplicationPolicy;
import org.apache.kafka.connect.mirror.TopicFilter;

/**
 * The MM2 classes a file names for its control plane ({@code replication.policy.class}, {@code topic.filter.class},
 * {@code group.filter.class}, {@code config.property.filter.class}), created as MM2 creates them: loaded from
 * {@code plugin.path}, built with their no-argument constructor and, when {@link Configurable}, configured with the
 * flow's connector config. The driver's Python asks them for names through py4j ({@code policy/plugged.py}); one
 * instance per class and config, as MM2 keeps one per connector.
 */
public final class MirrorClasses {
    private static final Map<String, Class<?>> INTERFACES = Map.of(
        "ReplicationPolicy", ReplicationPolicy.class,
        "TopicFilter", TopicFilter.class,
        "GroupFilter", GroupFilter.class,
        "ConfigPropertyFilter", ConfigPropertyFilter.class);
    private static final ConcurrentHashMap<List<Object>, Object> INSTANCES = new ConcurrentHashMap<>();

    private MirrorClasses() {
    }

    /** The configured instance of {@code className}, which must implement MM2's {@code interfaceName}. */
    public static Object instance(String className, String interfaceName, Map<String, String> configs,
                                  List<String> pluginPath) {
        Class<?> kind = INTERFACES.get(interfaceName);
        if (kind == null) {
            throw new RecordPathException("'" + interfaceName + "' is not one of MM2's pluggable interfaces "
                + INTERFACES.keySet());
        }
        List<Object> key = List.of(className, interfaceName, Map.copyOf(configs), List.copyOf(pluginPath));
        return INSTANCES.computeIfAbsent(key, k -> create(className, kind, configs, pluginPath));
    }

    private static Object create(String className, Class<?> kind, Map<String, String> configs,
                                 List<String> pluginPath) {
        if (!className.contains(".")) {
            throw new RecordPathException("class '" + className + "' must be given by its full name");
        }
        Object made = PluginClasses.instance(className, PluginClasses.loader(pluginPath), kind);
        if (made instanceof Configurable configurable) {
            configurable.configure(Map.copyOf(configs));
        }
        return made;
    }
}
