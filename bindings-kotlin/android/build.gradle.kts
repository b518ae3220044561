// NOT RUN HERE: see settings.gradle.kts.
plugins {
    id("com.android.library") version "8.7.3"
    id("org.jetbrains.kotlin.android") version "2.0.21"
}

val royaltykitVersion = providers.gradleProperty("royaltykit.version").get()

android {
    namespace = "dev.royaltykit.smoke"
    compileSdk = 35
    defaultConfig {
        minSdk = 24
        testInstrumentationRunner = "androidx.test.runner.AndroidJUnitRunner"
    }
    sourceSets["androidTest"].java.srcDir("../tests-android")
    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_11
        targetCompatibility = JavaVersion.VERSION_11
    }
    kotlinOptions { jvmTarget = "11" }
}

dependencies {
    androidTestImplementation("dev.royaltykit:royaltykit-android:$royaltykitVersion")
    androidTestImplementation("androidx.test:runner:1.6.2")
    androidTestImplementation("junit:junit:4.13.2")
}
