# Shared by the launchers (curator_lock, template_driver) and ./locklab setup (build.sh): where
# the Java example drivers' classes are and the classpath they need. Sourced, not run.
JAVA_DRIVERS_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Compiled by build.sh into the build tree (not the source tree, not committed).
JAVA_DRIVERS_CLASSES=${LOCKLAB_JAVA_CLASSES:-$(cd "$JAVA_DRIVERS_SRC/../../.." && pwd)/build/java-drivers}
# Debian's jars; their manifests' Class-Path names the rest (guava, jackson, netty, ...).
# slf4j-simple: Curator's and ZooKeeper's log lines go to stderr, the client's log.
JAVA_DRIVERS_CP=/usr/share/java/curator-recipes.jar:/usr/share/java/curator-framework.jar:/usr/share/java/curator-client.jar:/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-simple.jar
# JVM start-up is most of a driver's start on a small machine: C1 only, the serial GC, the
# JDK's class-data archive, a small heap. WARN and up from the libraries' loggers.
JAVA_DRIVERS_FLAGS=(-Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto
                    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn
                    -Dzookeeper.jmx.log4j.disable=true)
