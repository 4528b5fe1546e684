package org.elasticsearch.node;

import engram.es.EngramCompatPlugin;
import org.elasticsearch.common.logging.LogConfigurator;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.plugins.EngramPluginsService;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.PluginsLoader;
import org.elasticsearch.plugins.PluginsService;
import org.elasticsearch.transport.netty4.Netty4Plugin;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Runs one real Elasticsearch node in this JVM for deploy/local (servers/elasticsearch.sh).
 *
 *   java ... org.elasticsearch.node.EngramEsLauncher HOME [key=value ...]
 *
 * HOME/config holds elasticsearch.yml and log4j2.properties (copied there by the server script).
 *
 * The stock distribution loads modules and plugins from $ES_HOME/modules; the jars on Maven
 * Central have no such directory, so this subclass of Node swaps in a PluginsService that loads a
 * fixed list of plugin classes from the classpath: Netty4Plugin (the HTTP and transport layer) and
 * EngramCompatPlugin (GET /, the `english` analyzer and a few token filters, standing in for the
 * rest-root and analysis-common modules, which are not published to Central).
 *
 * Lives in org.elasticsearch.node because NodeConstruction and NodeServiceProvider are
 * package-private. Stops cleanly on SIGTERM (shutdown hook closes the node).
 */
public class EngramEsLauncher extends Node {
    static final List<Class<? extends Plugin>> PLUGINS = List.of(Netty4Plugin.class, EngramCompatPlugin.class);

    EngramEsLauncher(Environment env) {
        super(NodeConstruction.prepareConstruction(
            env,
            PluginsLoader.createPluginsLoader(Set.of(), Set.of(), Map.of(), false),
            new NodeServiceProvider() {
                @Override
                PluginsService newPluginService(Environment environment, PluginsLoader pluginsLoader) {
                    return new EngramPluginsService(environment.settings(), environment, PLUGINS);
                }
            },
            true));
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: EngramEsLauncher HOME [key=value ...]  (reads HOME/config/elasticsearch.yml, log4j2.properties)");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        Path configDir = home.resolve("config");
        Files.createDirectories(configDir);
        // key=value arguments override elasticsearch.yml, like `elasticsearch -Ekey=value`.
        Map<String, String> overrides = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq <= 0) throw new IllegalArgumentException("expected key=value, got: " + args[i]);
            overrides.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        Settings initial = Settings.builder().put("path.home", home.toString()).build();

        LogConfigurator.configureESLogging();
        Environment env = InternalSettingsPreparer.prepareEnvironment(initial, overrides, configDir, () -> "engram-es");
        // The %node_name log pattern (and ES's own log setup) need these before configure().
        LogConfigurator.setNodeName(NODE_NAME_SETTING.get(env.settings()));
        LogConfigurator.setClusterName(env.settings().get("cluster.name", "elasticsearch"));
        if (Files.exists(configDir.resolve("log4j2.properties"))) {
            LogConfigurator.configure(env, true);
        } else {
            LogConfigurator.configureWithoutConfig(env.settings());
        }

        CountDownLatch stopped = new CountDownLatch(1);
        Node node = new EngramEsLauncher(env);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.prepareForClose();
                node.close();
                node.awaitClose(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                stopped.countDown();
            }
        }, "engram-es-shutdown"));
        try {
            node.start();
        } catch (Throwable t) {
            // e.g. a port in use: exit instead of idling with ES's non-daemon threads alive.
            t.printStackTrace();
            System.exit(1);
        }
        System.out.println("[engram] elasticsearch node started");
        stopped.await(); // keep a non-daemon thread alive until shutdown
    }
}
