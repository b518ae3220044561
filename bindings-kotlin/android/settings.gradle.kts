// NOT RUN HERE (no Android SDK, emulator or Gradle on the development machine). The emulator job
// of .github/workflows/release.yml runs `gradle -p bindings-kotlin/android connectedCheck`: the
// shared smoke suite (../tests-android, also run on the JVM by `make test`) as an instrumented
// test against the AAR, resolved through its POM from dist/maven (laid out by that job), so the
// AAR, its POM, JNA's AAR and the consumer R8 rules are used the way an app uses them.
pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
}
dependencyResolutionManagement {
    repositories {
        maven { url = uri("../../dist/maven") }
        google()
        mavenCentral()
    }
}
rootProject.name = "royaltykit-android-smoke"
