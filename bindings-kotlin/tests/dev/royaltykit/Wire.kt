package dev.royaltykit

/** A vector's wire name (`idempotent_write`) as the Kotlin enum uniffi derives (`IDEMPOTENT_WRITE`). */
inline fun <reified T : Enum<T>> wire(name: String): T = enumValueOf(name.uppercase())

/** A Kotlin enum as its wire name, to compare with a vector. */
val Enum<*>.wireName: String get() = name.lowercase()

/**
 * The enum for a wire name, or null when Kotlin's types cannot express it (a vector's unknown
 * `jitter` or `retry_class`): the type system already rules such a value out in Kotlin.
 */
inline fun <reified T : Enum<T>> wireOrNull(name: String): T? = enumValues<T>().firstOrNull { it.name == name.uppercase() }
