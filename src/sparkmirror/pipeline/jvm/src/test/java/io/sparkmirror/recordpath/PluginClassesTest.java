package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.List;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.transforms.DropHeaders;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.HasHeaderKey;
import org.apache.kafka.connect.transforms.predicates.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PluginClassesTest {
    private final ClassLoader loader = PluginClassesTest.class.getClassLoader();

    @Test
    void connectsOwnTransformsAndPredicatesGoBySimpleName() {
        assertSame(DropHeaders.class, PluginClasses.load("DropHeaders", loader, Transformation.class));
        assertSame(HasHeaderKey.class, PluginClasses.load("HasHeaderKey", loader, Predicate.class));
    }

    @Test
    void anyOtherClassGoesByItsFullName() {
        Transformation<SourceRecord> t = PluginClasses.instance(Closing.Transform.class.getName(), loader,
                                                                Transformation.class);
        assertSame(Closing.Transform.class, t.getClass());
    }

    @Test
    void aMissingClassSaysWhereToPutItsJar() {
        RecordPathException e = assertThrows(RecordPathException.class,
            () -> PluginClasses.load("com.example.Nope", loader, Transformation.class));
        assertEquals("class 'com.example.Nope' was not found on plugin.path or the classpath; put its jar in a folder "
            + "listed in plugin.path", e.getMessage());
        assertThrows(RecordPathException.class, () -> PluginClasses.load("Nope", loader, Transformation.class));
    }

    @Test
    void aClassOfTheWrongKindIsRefused() {
        RecordPathException e = assertThrows(RecordPathException.class,
            () -> PluginClasses.load("HasHeaderKey", loader, Transformation.class));
        assertEquals("class 'HasHeaderKey' is not a Transformation", e.getMessage());
    }

    @Test
    void aClassWithoutANoArgumentConstructorIsRefused() {
        RecordPathException e = assertThrows(RecordPathException.class,
            () -> PluginClasses.instance(NeedsArgument.class.getName(), loader, Transformation.class));
        assertTrue(e.getMessage().startsWith("class '" + NeedsArgument.class.getName() + "' could not be created "
            + "(it needs a public no-argument constructor): "), e.getMessage());
    }

    @Test
    void withoutAPluginPathTheTasksLoaderIsUsed() {
        assertSame(Thread.currentThread().getContextClassLoader(), PluginClasses.loader(List.of()));
    }

    @Test
    void aPluginPathHasOneLoaderPerJvmAndSkipsWhatThisHostLacks(@TempDir Path plugins) throws Exception {
        List<String> path = List.of(plugins.toString(), plugins.resolve("absent").toString());
        ClassLoader first = PluginClasses.loader(path);
        assertSame(first, PluginClasses.loader(List.of(plugins.toString(), plugins.resolve("absent").toString())));
        assertEquals(List.of(plugins.toUri().toURL()), List.of(((URLClassLoader) first).getURLs()));
        assertSame(DropHeaders.class, PluginClasses.load("DropHeaders", first, Transformation.class));
    }

    /** A transform Connect could not create either. */
    public static final class NeedsArgument extends DropHeaders<SourceRecord> {
        public NeedsArgument(String unused) {
        }
    }
}
