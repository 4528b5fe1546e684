package org.elasticsearch.plugins;

import org.elasticsearch.Build;
import org.elasticsearch.action.admin.cluster.node.info.PluginsAndModules;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A PluginsService for deploy/local's embedded Elasticsearch node: it loads a fixed list of plugin
 * classes from the JVM classpath (jars resolved from Maven Central) instead of scanning
 * $ES_HOME/modules and $ES_HOME/plugins, which an embedded node does not have.
 *
 * Lives in org.elasticsearch.plugins because LoadedPlugin, loadPlugin and loadExtensions are
 * package-private. These internals change between ES minors: the version is pinned in pom.xml.
 */
public class EngramPluginsService extends PluginsService {
    private final List<LoadedPlugin> classpathPlugins;

    public EngramPluginsService(Settings settings, Environment env, List<Class<? extends Plugin>> pluginClasses) {
        super(settings, env.configDir(), PluginsLoader.createPluginsLoader(Set.of(), Set.of(), Map.of(), false));
        List<LoadedPlugin> loaded = new ArrayList<>();
        for (Class<? extends Plugin> c : pluginClasses) {
            Plugin instance = loadPlugin(c, settings, env.configDir());
            PluginDescriptor descriptor = new PluginDescriptor(
                c.getName(), "classpath plugin (deploy/local)", "NA", Build.current().version(),
                Integer.toString(Runtime.version().feature()), c.getName(), null, List.of(),
                false, false, false, false);
            loaded.add(new LoadedPlugin(descriptor, instance, c.getClassLoader()));
        }
        loadExtensions(loaded);
        this.classpathPlugins = List.copyOf(loaded);
    }

    @Override
    protected final List<LoadedPlugin> plugins() {
        return classpathPlugins;
    }

    @Override
    public PluginsAndModules info() {
        List<PluginRuntimeInfo> infos = new ArrayList<>();
        for (LoadedPlugin p : classpathPlugins) infos.add(new PluginRuntimeInfo(p.descriptor()));
        return new PluginsAndModules(infos, List.of());
    }
}
