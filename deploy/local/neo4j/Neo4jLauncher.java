/*
 * Runs the Neo4j 5 community server (Bolt + HTTP + Browser) in this JVM, for deploy/local only.
 *
 *   java -cp <classes>:<neo4j classpath> Neo4jLauncher <home dir> <neo4j.conf> [key=value ...]
 *
 * Why not the neo4j-harness: it stores data in a random directory (nothing survives a restart) and
 * drags in JUnit/Mockito. Why not a bare DatabaseManagementServiceBuilder: it has no web server, so
 * no HTTP API and no Browser. CommunityBootstrapper is what the `neo4j console` script ends up
 * calling, so this is the real server with a config file we own and fixed data directories.
 *
 * The bootstrapper installs a SIGTERM handler (System.exit) and a shutdown hook that shuts the
 * DBMS down cleanly, so `kill -TERM` is a graceful stop.
 */
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.neo4j.server.CommunityBootstrapper;

public final class Neo4jLauncher {
    private Neo4jLauncher() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: Neo4jLauncher <home dir> <neo4j.conf> [key=value ...]");
            System.exit(64);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        Path conf = Path.of(args[1]).toAbsolutePath();
        Map<String, String> overrides = new LinkedHashMap<>();
        for (int i = 2; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq <= 0) {
                System.err.println("not key=value: " + args[i]);
                System.exit(64);
            }
            overrides.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }

        long t0 = System.nanoTime();
        CommunityBootstrapper server = new CommunityBootstrapper();
        // Console mode (daemonMode=false): neo4j.log goes to stdout, i.e. to the infra log file.
        int rc = server.start(home, conf, overrides, false, false);
        if (rc != 0) {
            System.err.println("ENGRAM_NEO4J_FAILED exit code " + rc);
            System.exit(rc);
        }

        // Prove the default database answers Cypher before announcing readiness.
        String db = overrides.getOrDefault("initial.dbms.default_database", "neo4j");
        server.getDatabaseManagementService().database(db).executeTransactionally("RETURN 1");
        System.out.printf("ENGRAM_NEO4J_READY in %d ms (bolt %s, http %s)%n",
                (System.nanoTime() - t0) / 1_000_000,
                overrides.get("server.bolt.listen_address"),
                overrides.get("server.http.listen_address"));

        // Park the main thread; the bootstrapper's SIGTERM handler exits the JVM and its
        // shutdown hook stops the DBMS.
        new CountDownLatch(1).await();
    }
}
