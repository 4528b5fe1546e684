package engram.es;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.en.EnglishPossessiveFilter;
import org.apache.lucene.analysis.en.KStemFilter;
import org.apache.lucene.analysis.en.PorterStemFilter;
import org.apache.lucene.analysis.miscellaneous.ASCIIFoldingFilter;
import org.elasticsearch.Build;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.bytes.BytesArray;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.index.IndexVersion;
import org.elasticsearch.index.analysis.AbstractIndexAnalyzerProvider;
import org.elasticsearch.index.analysis.Analysis;
import org.elasticsearch.index.analysis.AnalyzerProvider;
import org.elasticsearch.index.analysis.PreBuiltAnalyzerProviderFactory;
import org.elasticsearch.index.analysis.PreConfiguredTokenFilter;
import org.elasticsearch.indices.analysis.AnalysisModule.AnalysisProvider;
import org.elasticsearch.indices.analysis.PreBuiltCacheFactory.CachingStrategy;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.plugins.AnalysisPlugin;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.RestResponse;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.xcontent.XContentBuilder;

import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Stand-ins for two Elasticsearch modules that are not published to Maven Central:
 *  - rest-root: GET / and HEAD / (cluster info, used by client.info() and client.ping());
 *  - analysis-common, the part Engram uses: the `english` analyzer (built-in and as a custom
 *    analyzer type with `stopwords`/`stem_exclusion`, same Lucene EnglishAnalyzer as the module)
 *    and the `porter_stem`, `kstem`, `english_possessive` and `asciifolding` token filters.
 * Everything else from analysis-common (ngram, synonym, stemmer with parameters, other languages)
 * is still missing.
 */
public class EngramCompatPlugin extends Plugin implements AnalysisPlugin, ActionPlugin {
    private volatile ClusterService clusterService;

    @Override
    public Collection<?> createComponents(PluginServices services) {
        clusterService = services.clusterService();
        return List.of();
    }

    // ---- analysis ----

    static final class EnglishAnalyzerProvider extends AbstractIndexAnalyzerProvider<EnglishAnalyzer> {
        private final EnglishAnalyzer analyzer;

        EnglishAnalyzerProvider(Environment env, String name, Settings settings) {
            super(name, settings);
            analyzer = new EnglishAnalyzer(
                Analysis.parseStopWords(env, settings, EnglishAnalyzer.getDefaultStopSet()),
                Analysis.parseStemExclusion(settings, CharArraySet.EMPTY_SET));
        }

        @Override
        public EnglishAnalyzer get() {
            return analyzer;
        }
    }

    @Override
    public Map<String, AnalysisProvider<AnalyzerProvider<? extends Analyzer>>> getAnalyzers() {
        return Map.of("english", (indexSettings, env, name, settings) -> new EnglishAnalyzerProvider(env, name, settings));
    }

    @Override
    public List<PreBuiltAnalyzerProviderFactory> getPreBuiltAnalyzerProviderFactories() {
        return List.of(new PreBuiltAnalyzerProviderFactory("english", CachingStrategy.LUCENE, EnglishAnalyzer::new));
    }

    @Override
    public List<PreConfiguredTokenFilter> getPreConfiguredTokenFilters() {
        return List.of(
            PreConfiguredTokenFilter.singleton("porter_stem", false, PorterStemFilter::new),
            PreConfiguredTokenFilter.singleton("kstem", false, KStemFilter::new),
            PreConfiguredTokenFilter.singleton("english_possessive", false, EnglishPossessiveFilter::new),
            PreConfiguredTokenFilter.singleton("asciifolding", true, ASCIIFoldingFilter::new));
    }

    // ---- GET / ----

    @Override
    public Collection<RestHandler> getRestHandlers(
        Settings settings,
        org.elasticsearch.common.io.stream.NamedWriteableRegistry namedWriteableRegistry,
        org.elasticsearch.rest.RestController restController,
        org.elasticsearch.common.settings.ClusterSettings clusterSettings,
        org.elasticsearch.common.settings.IndexScopedSettings indexScopedSettings,
        org.elasticsearch.common.settings.SettingsFilter settingsFilter,
        org.elasticsearch.cluster.metadata.IndexNameExpressionResolver indexNameExpressionResolver,
        java.util.function.Supplier<org.elasticsearch.cluster.node.DiscoveryNodes> nodesInCluster,
        java.util.function.Predicate<org.elasticsearch.features.NodeFeature> clusterSupportsFeature) {
        return List.of(new MainHandler());
    }

    final class MainHandler extends BaseRestHandler {
        @Override
        public String getName() {
            return "engram_main_action";
        }

        @Override
        public List<Route> routes() {
            return List.of(new Route(RestRequest.Method.GET, "/"), new Route(RestRequest.Method.HEAD, "/"));
        }

        @Override
        protected RestChannelConsumer prepareRequest(RestRequest request, org.elasticsearch.client.internal.node.NodeClient client) {
            return channel -> {
                if (request.method() == RestRequest.Method.HEAD) {
                    channel.sendResponse(new RestResponse(RestStatus.OK, RestResponse.TEXT_CONTENT_TYPE, BytesArray.EMPTY));
                    return;
                }
                Build build = Build.current();
                ClusterService cs = clusterService;
                XContentBuilder b = channel.newBuilder();
                b.startObject();
                b.field("name", cs.localNode().getName());
                b.field("cluster_name", cs.getClusterName().value());
                b.field("cluster_uuid", cs.state().metadata().clusterUUID());
                b.startObject("version")
                    .field("number", build.qualifiedVersion())
                    .field("build_flavor", build.flavor())
                    .field("build_type", build.type().displayName())
                    .field("build_hash", build.hash())
                    .field("build_date", build.date())
                    .field("build_snapshot", build.isSnapshot())
                    .field("lucene_version", IndexVersion.current().luceneVersion().toString())
                    .field("minimum_wire_compatibility_version", build.minWireCompatVersion())
                    .field("minimum_index_compatibility_version", build.minIndexCompatVersion())
                    .endObject();
                b.field("tagline", "You Know, for Search");
                b.endObject();
                channel.sendResponse(new RestResponse(RestStatus.OK, b));
            };
        }
    }
}
