package io.sparkmirror.recordpath;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * The calls of Confluent's Schema Registry API the id rewrite makes (Apicurio's ccompat API answers them too), on
 * Java's own HTTP client: no registry client library on the record path's classpath.
 */
final class RegistryClient {
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

    final String url;  // without a trailing slash
    private final String authorization;  // null: none

    /** {@code userInfo}: basic auth's "user:password" (Confluent's basic.auth.user.info), or null. */
    RegistryClient(String url, String userInfo) {
        this.url = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
        this.authorization = userInfo == null || userInfo.isEmpty() ? null
            : "Basic " + Base64.getEncoder().encodeToString(userInfo.getBytes(StandardCharsets.UTF_8));
    }

    /** A schema by its id: schema, schemaType (absent for Avro), references; null when the registry has none. */
    Map<String, Object> schemaById(int id) {
        return get("/schemas/ids/" + id, new TypeReference<>() { });
    }

    /** The subjects and versions under which a schema id is registered; null when the id is unknown. */
    List<Map<String, Object>> subjectVersionsOf(int id) {
        return get("/schemas/ids/" + id + "/versions", new TypeReference<>() { });
    }

    /** A subject's versions, oldest first; null when the subject does not exist. */
    List<Integer> versions(String subject) {
        return get("/subjects/" + encode(subject) + "/versions", new TypeReference<>() { });
    }

    /** One version of a subject: subject, version, id, schema, schemaType, references. */
    Map<String, Object> version(String subject, int version) {
        Map<String, Object> out = get("/subjects/" + encode(subject) + "/versions/" + version, new TypeReference<>() { });
        if (out == null) {
            throw new RecordPathException("schema registry " + url + ": subject '" + subject + "' has no version "
                + version);
        }
        return out;
    }

    /** Registers a schema under a subject (a schema it already holds keeps its id and version); its id. */
    int register(String subject, Map<String, Object> schema) {
        Map<String, Object> out = post("/subjects/" + encode(subject) + "/versions", schema);
        return ((Number) out.get("id")).intValue();
    }

    /** The version under which a subject holds a schema (after {@link #register}). */
    int versionOf(String subject, Map<String, Object> schema) {
        Map<String, Object> out = post("/subjects/" + encode(subject), schema);
        return ((Number) out.get("version")).intValue();
    }

    private static String encode(String subject) {
        return URLEncoder.encode(subject, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url + path)).timeout(TIMEOUT)
            .header("Accept", "application/vnd.schemaregistry.v1+json, application/json");
        return authorization == null ? b : b.header("Authorization", authorization);
    }

    private <T> T get(String path, TypeReference<T> type) {
        HttpResponse<String> r = send(request(path).GET().build(), path);
        return r.statusCode() == 404 ? null : parse(r, type, path);
    }

    private Map<String, Object> post(String path, Map<String, Object> body) {
        try {
            HttpRequest req = request(path).header("Content-Type", "application/vnd.schemaregistry.v1+json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build();
            return parse(send(req, path), new TypeReference<>() { }, path);
        } catch (IOException e) {
            throw new RecordPathException("schema registry " + url + path + ": " + e);
        }
    }

    private HttpResponse<String> send(HttpRequest req, String path) {
        try {
            return HTTP.send(req, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new RecordPathException("schema registry " + url + " did not answer " + path + " (" + e
                + "); is it running, and is the cluster's sparkmirror.schema.registry.url right?");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RecordPathException("interrupted while asking schema registry " + url + path);
        }
    }

    private <T> T parse(HttpResponse<String> r, TypeReference<T> type, String path) {
        if (r.statusCode() / 100 != 2) {
            String hint = r.statusCode() == 401 || r.statusCode() == 403
                ? "; check the cluster's sparkmirror.schema.registry.basic.auth.user.info" : "";
            throw new RecordPathException("schema registry " + url + path + " answered " + r.statusCode() + ": "
                + r.body() + hint);
        }
        try {
            return JSON.readValue(r.body(), type);
        } catch (IOException e) {
            throw new RecordPathException("schema registry " + url + path + ": not the JSON expected: " + r.body());
        }
    }
}
