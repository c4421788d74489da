package io.sparkmirror.recordpath;

import java.io.File;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Classes named in an MM2 file (transforms, predicates), loaded as Connect's worker loads them: by class name, or
 * by the simple name of one of Connect's own transforms or predicates, from the JVM's own classpath and then from
 * MM2's {@code plugin.path} (its jars and class folders, listed by the driver). On a Spark cluster the driver also adds
 * the plugin path's jars to the job, so an executor that lacks the folder finds them on its task class loader.
 */
final class PluginClasses {
    private static final String TRANSFORMS = "org.apache.kafka.connect.transforms.";
    private static final String PREDICATES = TRANSFORMS + "predicates.";
    private static final ConcurrentHashMap<List<String>, ClassLoader> LOADERS = new ConcurrentHashMap<>();

    private PluginClasses() {
    }

    /** The class loader of a plugin path (cached per path list, so every task of a JVM shares one). */
    static ClassLoader loader(List<String> pluginPath) {
        ClassLoader parent = Thread.currentThread().getContextClassLoader();
        if (parent == null) {
            parent = PluginClasses.class.getClassLoader();
        }
        if (pluginPath.isEmpty()) {
            return parent;
        }
        ClassLoader base = parent;
        return LOADERS.computeIfAbsent(List.copyOf(pluginPath), paths -> new URLClassLoader(urls(paths), base));
    }

    /** Each path a jar or a folder of classes, as config/plugin_path.class_roots lists them; a path this JVM
     * lacks (an executor on another host) is skipped: the driver added the jars to the job. */
    private static URL[] urls(List<String> paths) {
        List<URL> out = new ArrayList<>();
        for (String path : paths) {
            File entry = new File(path);
            if (!entry.exists()) {
                continue;
            }
            try {
                out.add(entry.toURI().toURL());
            } catch (MalformedURLException e) {
                throw new RecordPathException("plugin.path entry '" + path + "' is not a usable path: " + e);
            }
        }
        return out.toArray(new URL[0]);
    }

    /** Connect's own simple names ({@code Filter}, {@code HasHeaderKey}) or a full class name. */
    static Class<?> load(String name, ClassLoader loader, Class<?> kind) {
        List<String> candidates = name.contains(".") ? List.of(name) : List.of(TRANSFORMS + name, PREDICATES + name);
        for (String candidate : candidates) {
            try {
                Class<?> found = Class.forName(candidate, true, loader);
                if (!kind.isAssignableFrom(found)) {
                    throw new RecordPathException("class '" + name + "' is not a " + kind.getSimpleName());
                }
                return found;
            } catch (ClassNotFoundException e) {
                // try the next candidate
            }
        }
        throw new RecordPathException("class '" + name + "' was not found on plugin.path or the classpath; put its "
            + "jar in a folder listed in plugin.path");
    }

    static <T> T instance(String name, ClassLoader loader, Class<T> kind) {
        Class<?> found = load(name, loader, kind);
        try {
            return kind.cast(found.getDeclaredConstructor().newInstance());
        } catch (ReflectiveOperationException e) {
            throw new RecordPathException("class '" + name + "' could not be created (it needs a public no-argument "
                + "constructor): " + e);
        }
    }
}
