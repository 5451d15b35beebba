//! Two derives of `Deserialize` that read through a `serde_json::Value`, for the wasm bundles'
//! size. The wire is unchanged; `Serialize` stays serde's derive.
//!
//! ## `#[derive(TaggedDeserialize)]`: an internally tagged enum (`#[serde(tag = "…")]`)
//!
//! serde's own derive reads such an enum by buffering the input into its private `Content`
//! and then reading the variant from that buffer. Every type below the enum is compiled once
//! more for that buffer: in the wasm bundles this was the largest single share of serde's
//! code (a fifth of the side panel). This derive reads the input into a `Value`, takes the
//! tag out, and reads the variant's fields with `serde_json::from_value`: the path the rest of
//! the bundle already compiles. The wire is unchanged; `Serialize` stays serde's derive.
//!
//! What it reads from the `#[serde(…)]` attributes, as serde does:
//! - on the enum: `tag` (required), `rename_all` (variant names: `snake_case`, `camelCase`,
//!   `lowercase`, `kebab-case`), `deny_unknown_fields`;
//! - on a variant: `rename`, `alias`, `other` (a unit variant for any unknown tag),
//!   `skip_deserializing` (read as the `other` variant if there is one, else refused: a reader
//!   that leaves out the variants it does not take, and their code);
//! - on a field: every attribute, copied onto a private struct that serde's derive reads.
//!
//! Unit, struct and newtype variants are supported; a tuple variant or a generic enum is a
//! compile error.
//!
//! ## `#[derive(FieldsDeserialize)]`: a struct with named fields
//!
//! serde's derive compiles, for every struct and every kind of input, a field-name visitor
//! (three functions), a map visitor and a sequence visitor (the struct as a JSON array, which
//! nothing here sends). This derive writes one plain function per struct that takes each
//! field out of the object by name: about a third of the code.
//! - on the struct: `rename_all`, `default`, `deny_unknown_fields`;
//! - on a field: `rename`, `alias`, `default`, `default = "…"`, `skip`/`skip_deserializing`;
//!   `deserialize_with`, `flatten` (what the named fields left, read after them); serialize-side
//!   attributes are ignored. A missing `Option` field reads as `None`, as in serde. `with` is a
//!   compile error: keep serde's derive.
//! - A struct must be a JSON object: serde's array form is not read.
//!
//! ## `#[derive(UnitDeserialize)]`: an enum of unit variants, written as strings
//!
//! serde compiles a variant-name visitor (three functions) and an enum visitor for each such
//! enum; this reads a string and matches it. `rename_all` on the enum, `rename`, `alias` and
//! `other` on a variant are read. serde's map form (`{"variant": null}`) is not: nothing here
//! writes it.
//!
//! The crate using any of these derives must depend on `serde` and `serde_json`.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::{Attribute, Data, DeriveInput, Error, Fields, LitStr, parse_macro_input};

#[proc_macro_derive(TaggedDeserialize, attributes(serde))]
pub fn derive_tagged_deserialize(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand(&input).unwrap_or_else(Error::into_compile_error).into()
}

#[proc_macro_derive(FieldsDeserialize, attributes(serde))]
pub fn derive_fields_deserialize(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand_fields(&input).unwrap_or_else(Error::into_compile_error).into()
}

#[proc_macro_derive(UnitDeserialize, attributes(serde))]
pub fn derive_unit_deserialize(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand_units(&input).unwrap_or_else(Error::into_compile_error).into()
}

#[derive(Default)]
struct Container {
    tag: Option<String>,
    rename_all: Option<String>,
    deny_unknown_fields: bool,
}

#[derive(Default)]
struct StructAttrs {
    rename_all: Option<String>,
    default: bool,
    deny_unknown_fields: bool,
}

#[derive(Default)]
struct FieldAttrs {
    rename: Option<String>,
    aliases: Vec<String>,
    /// `Some(None)`: `Default::default()`; `Some(Some(path))`: that function.
    default: Option<Option<syn::ExprPath>>,
    skip: bool,
    flatten: bool,
    deserialize_with: Option<syn::ExprPath>,
}

#[derive(Default)]
struct VariantAttrs {
    rename: Option<String>,
    aliases: Vec<String>,
    other: bool,
    /// Read as the `other` variant (or refused as unknown): its reader is never compiled.
    skip: bool,
}

fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    let (data, container) = enum_input(input, "TaggedDeserialize")?;
    let Some(tag) = container.tag.clone() else {
        return Err(Error::new_spanned(input, "TaggedDeserialize needs #[serde(tag = \"…\")]"));
    };
    let name = &input.ident;
    let expected = format!("internally tagged enum {name}");
    let mut names = Vec::new();
    let mut arms = Vec::new();
    let mut fallback = quote! {
        return ::core::result::Result::Err(<::serde_json::Error as ::serde::de::Error>::unknown_variant(&tag, VARIANTS))
    };
    for variant in &data.variants {
        let attrs = variant_attrs(&variant.attrs)?;
        let ident = &variant.ident;
        if attrs.other {
            if !matches!(variant.fields, Fields::Unit) {
                return Err(Error::new_spanned(variant, "#[serde(other)] goes on a unit variant"));
            }
            fallback = quote! { ::core::result::Result::Ok(#name::#ident) };
            continue;
        }
        if attrs.skip {
            continue;
        }
        let patterns = wire_names(ident, &attrs, container.rename_all.as_deref());
        names.push(patterns[0].clone());
        let body = match &variant.fields {
            Fields::Unit => quote! { ::core::result::Result::Ok(#name::#ident) },
            Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
                let ty = &fields.unnamed[0].ty;
                quote! {
                    ::serde_json::from_value::<#ty>(::serde_json::Value::Object(map)).map(#name::#ident)
                }
            }
            Fields::Unnamed(_) => {
                return Err(Error::new_spanned(
                    variant,
                    "a tuple variant cannot be internally tagged",
                ));
            }
            Fields::Named(fields) => {
                let shadow = format_ident!("__{}Fields", ident);
                let deny =
                    container.deny_unknown_fields.then(|| quote! { #[serde(deny_unknown_fields)] });
                let members: Vec<_> = fields.named.iter().map(|f| f.ident.clone()).collect();
                let declared = fields.named.iter().map(|f| {
                    let serde_attrs = f.attrs.iter().filter(|a| a.path().is_ident("serde"));
                    let (ident, ty) = (&f.ident, &f.ty);
                    quote! { #(#serde_attrs)* #ident: #ty }
                });
                quote! {{
                    #[derive(::tagged_de::FieldsDeserialize)]
                    #deny
                    struct #shadow { #(#declared,)* }
                    let read: #shadow = ::serde_json::from_value(::serde_json::Value::Object(map))?;
                    ::core::result::Result::Ok(#name::#ident { #(#members: read.#members,)* })
                }}
            }
        };
        arms.push(quote! { #(#patterns)|* => #body, });
    }
    let deserialize =
        deserialize_through(name, quote! { ::serde_json::Value }, "from_tagged_value");
    let object = object_or_error(&expected);
    Ok(quote! {
        #deserialize

        impl #name {
            /// Reads the enum from a `Value` by its tag: compiled once, whatever the input.
            #[allow(unused_mut, clippy::all)]
            fn from_tagged_value(value: ::serde_json::Value) -> ::core::result::Result<Self, ::serde_json::Error> {
                const VARIANTS: &[&str] = &[#(#names),*];
                #object
                let tag = match map.remove(#tag) {
                    ::core::option::Option::Some(::serde_json::Value::String(tag)) => tag,
                    ::core::option::Option::Some(_) => return ::core::result::Result::Err(
                        <::serde_json::Error as ::serde::de::Error>::custom(::core::concat!("invalid type: the `", #tag, "` of ", #expected, " is not a string")),
                    ),
                    ::core::option::Option::None => return ::core::result::Result::Err(
                        <::serde_json::Error as ::serde::de::Error>::missing_field(#tag),
                    ),
                };
                match tag.as_str() {
                    #(#arms)*
                    _ => { let _ = &map; #fallback }
                }
            }
        }
    })
}

fn expand_units(input: &DeriveInput) -> syn::Result<Tokens> {
    let (data, container) = enum_input(input, "UnitDeserialize")?;
    if container.tag.is_some() {
        return Err(Error::new_spanned(input, "a tagged enum wants TaggedDeserialize"));
    }
    let name = &input.ident;
    let mut names = Vec::new();
    let mut arms = Vec::new();
    let mut fallback = quote! {
        ::core::result::Result::Err(<::serde_json::Error as ::serde::de::Error>::unknown_variant(&text, VARIANTS))
    };
    for variant in &data.variants {
        if !matches!(variant.fields, Fields::Unit) {
            return Err(Error::new_spanned(variant, "UnitDeserialize reads unit variants only"));
        }
        let attrs = variant_attrs(&variant.attrs)?;
        let ident = &variant.ident;
        if attrs.other {
            fallback = quote! { ::core::result::Result::Ok(#name::#ident) };
            continue;
        }
        let patterns = wire_names(ident, &attrs, container.rename_all.as_deref());
        names.push(patterns[0].clone());
        arms.push(quote! { #(#patterns)|* => ::core::result::Result::Ok(#name::#ident), });
    }
    let deserialize =
        deserialize_through(name, quote! { ::std::string::String }, "from_variant_name");
    Ok(quote! {
        #deserialize

        impl #name {
            /// The variant a name stands for: compiled once, whatever the input.
            #[allow(clippy::all)]
            fn from_variant_name(text: ::std::string::String) -> ::core::result::Result<Self, ::serde_json::Error> {
                const VARIANTS: &[&str] = &[#(#names),*];
                match text.as_str() {
                    #(#arms)*
                    _ => #fallback,
                }
            }
        }
    })
}

fn expand_fields(input: &DeriveInput) -> syn::Result<Tokens> {
    let Data::Struct(data) = &input.data else {
        return Err(Error::new_spanned(input, "FieldsDeserialize is for structs"));
    };
    let Fields::Named(fields) = &data.fields else {
        return Err(Error::new_spanned(
            input,
            "FieldsDeserialize is for structs with named fields",
        ));
    };
    no_generics(input, "FieldsDeserialize")?;
    let attrs = struct_attrs(&input.attrs)?;
    let name = &input.ident;
    let expected = format!("struct {name}");
    let mut known = Vec::new();
    let mut reads = Vec::new();
    // Flattened fields read what the others left, after them, as serde's do.
    let mut flattened = Vec::new();
    for field in &fields.named {
        let ident = field.ident.as_ref().expect("named");
        let ty = &field.ty;
        let field_attrs = field_attrs(&field.attrs)?;
        if field_attrs.skip {
            reads.push(quote! { let #ident: #ty = ::core::default::Default::default(); });
            continue;
        }
        if field_attrs.flatten {
            if attrs.deny_unknown_fields {
                return Err(Error::new_spanned(
                    field,
                    "flatten with deny_unknown_fields is refused, as by serde",
                ));
            }
            flattened.push((ident.clone(), ty));
            continue;
        }
        let wire = field_attrs
            .rename
            .clone()
            .unwrap_or_else(|| renamed_field(&ident.to_string(), attrs.rename_all.as_deref()));
        let mut keys = vec![wire.clone()];
        keys.extend(field_attrs.aliases.iter().cloned());
        known.extend(keys.iter().cloned());
        let missing = match (&field_attrs.default, attrs.default, is_option(ty)) {
            (Some(Some(path)), _, _) => quote! { #path() },
            (Some(None), _, _) => quote! { ::core::default::Default::default() },
            (None, true, _) => quote! { defaults.#ident },
            (None, false, true) => quote! { ::core::option::Option::None },
            (None, false, false) => quote! {
                return ::core::result::Result::Err(<::serde_json::Error as ::serde::de::Error>::missing_field(#wire))
            },
        };
        // Through one shared reader per field type (`lean::take_field`): written out here,
        // the read of each field of each struct was a copy of its own.
        reads.push(match &field_attrs.deserialize_with {
            Some(path) => quote! {
                let #ident: #ty = match [#(#keys),*].iter().find_map(|key| map.remove(*key)) {
                    ::core::option::Option::Some(value) => #path(value)?,
                    ::core::option::Option::None => #missing,
                };
            },
            None => quote! {
                let #ident: #ty = match ::lean::take_field::<#ty>(&mut map, &[#(#keys),*])? {
                    ::core::option::Option::Some(value) => value,
                    ::core::option::Option::None => #missing,
                };
            },
        });
    }
    let last = flattened.len().saturating_sub(1);
    for (n, (ident, ty)) in flattened.iter().enumerate() {
        // Each flattened field reads what the fields before it left; as in serde, a flattened
        // struct takes its own keys (so it must derive this too), the last takes the rest.
        reads.push(if n == last {
            quote! { let #ident: #ty = ::serde_json::from_value(::serde_json::Value::Object(map))?; }
        } else {
            quote! {
                let #ident: #ty = ::serde_json::from_value(::serde_json::Value::Object(map.clone()))?;
                for key in <#ty>::WIRE_FIELDS {
                    map.remove(*key);
                }
            }
        });
    }
    let members: Vec<_> = fields.named.iter().map(|f| f.ident.clone()).collect();
    let defaults = attrs
        .default
        .then(|| quote! { let defaults: #name = ::core::default::Default::default(); });
    let deny = attrs.deny_unknown_fields.then(|| {
        quote! {
            if let ::core::option::Option::Some(key) = map.keys().find(|key| !Self::WIRE_FIELDS.contains(&key.as_str())) {
                return ::core::result::Result::Err(<::serde_json::Error as ::serde::de::Error>::unknown_field(key, Self::WIRE_FIELDS));
            }
        }
    });
    let deserialize =
        deserialize_through(name, quote! { ::serde_json::Value }, "from_fields_value");
    let object = object_or_error(&expected);
    Ok(quote! {
        #deserialize

        impl #name {
            /// The keys this struct reads, which it takes when flattened into another.
            #[doc(hidden)]
            pub const WIRE_FIELDS: &'static [&'static str] = &[#(#known),*];

            /// Reads the struct from a JSON object, field by field: compiled once.
            #[allow(unused_mut, clippy::all)]
            fn from_fields_value(value: ::serde_json::Value) -> ::core::result::Result<Self, ::serde_json::Error> {
                #object
                #deny
                #defaults
                #(#reads)*
                ::core::result::Result::Ok(#name { #(#members),* })
            }
        }
    })
}

/// Whether a field's type is `Option<…>`: serde reads such a field as `None` when missing.
fn is_option(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

fn struct_attrs(attrs: &[Attribute]) -> syn::Result<StructAttrs> {
    let mut out = StructAttrs::default();
    each_serde_meta(attrs, |meta| {
        if meta.path.is_ident("rename_all") {
            let rule = meta.value()?.parse::<LitStr>()?.value();
            if !FIELD_RULES.contains(&rule.as_str()) {
                return Err(meta.error(format!("rename_all = {rule:?} is not read here")));
            }
            out.rename_all = Some(rule);
        } else if meta.path.is_ident("default") {
            if meta.input.peek(syn::Token![=]) {
                return Err(meta.error("FieldsDeserialize reads `default` without a function here"));
            }
            out.default = true;
        } else if meta.path.is_ident("deny_unknown_fields") {
            out.deny_unknown_fields = true;
        } else {
            return Err(meta.error("FieldsDeserialize does not read this struct attribute"));
        }
        Ok(())
    })?;
    Ok(out)
}

fn field_attrs(attrs: &[Attribute]) -> syn::Result<FieldAttrs> {
    let mut out = FieldAttrs::default();
    each_serde_meta(attrs, |meta| {
        let path = &meta.path;
        if path.is_ident("rename") {
            out.rename = Some(meta.value()?.parse::<LitStr>()?.value());
        } else if path.is_ident("alias") {
            out.aliases.push(meta.value()?.parse::<LitStr>()?.value());
        } else if path.is_ident("default") {
            out.default = Some(if meta.input.peek(syn::Token![=]) {
                Some(meta.value()?.parse::<LitStr>()?.parse::<syn::ExprPath>()?)
            } else {
                None
            });
        } else if path.is_ident("skip") || path.is_ident("skip_deserializing") {
            out.skip = true;
        } else if path.is_ident("flatten") {
            out.flatten = true;
        } else if path.is_ident("deserialize_with") {
            out.deserialize_with = Some(meta.value()?.parse::<LitStr>()?.parse::<syn::ExprPath>()?);
        } else if path.is_ident("skip_serializing_if") || path.is_ident("serialize_with") {
            meta.value()?.parse::<LitStr>()?;
        } else if path.is_ident("skip_serializing") {
        } else {
            return Err(meta.error(
                "FieldsDeserialize does not read this field attribute: keep serde's derive",
            ));
        }
        Ok(())
    })?;
    Ok(out)
}

/// A field's name as serde's `rename_all` on a struct writes it (fields are snake_case).
fn renamed_field(field: &str, rule: Option<&str>) -> String {
    match rule {
        Some("camelCase") => {
            let mut out = String::new();
            let mut upper = false;
            for c in field.chars() {
                if c == '_' {
                    upper = true;
                } else if upper {
                    out.extend(c.to_uppercase());
                    upper = false;
                } else {
                    out.push(c);
                }
            }
            out
        }
        Some("kebab-case") => field.replace('_', "-"),
        Some("SCREAMING_SNAKE_CASE") => field.to_uppercase(),
        // snake_case and lowercase leave a Rust field name as it is.
        _ => field.to_owned(),
    }
}

/// `impl Deserialize`: reads `input` (a `Value` or a `String`) from any deserializer, then
/// hands it to `reader`, the one non-generic function that builds the type.
fn deserialize_through(name: &syn::Ident, input: Tokens, reader: &str) -> Tokens {
    let reader = format_ident!("{reader}");
    // A Value input is taken as it is when the deserializer is a Value (see lean::value_of).
    let read_input = if reader == "from_variant_name" {
        quote! { <#input as ::serde::Deserialize>::deserialize(deserializer)? }
    } else {
        quote! { ::lean::value_of(deserializer)? }
    };
    quote! {
        impl<'de> ::serde::Deserialize<'de> for #name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::core::result::Result<Self, D::Error> {
                let input = #read_input;
                #name::#reader(input).map_err(<D::Error as ::serde::de::Error>::custom)
            }
        }
    }
}

/// `let mut map = …`: the object in `value`, or an error naming what was expected.
fn object_or_error(expected: &str) -> Tokens {
    quote! {
        let mut map = match value {
            ::serde_json::Value::Object(map) => map,
            _ => return ::core::result::Result::Err(<::serde_json::Error as ::serde::de::Error>::custom(
                ::core::concat!("invalid type: expected ", #expected),
            )),
        };
    }
}

/// A variant's name on the wire, then its aliases.
fn wire_names(ident: &syn::Ident, attrs: &VariantAttrs, rule: Option<&str>) -> Vec<String> {
    let wire = attrs.rename.clone().unwrap_or_else(|| renamed(&ident.to_string(), rule));
    std::iter::once(wire).chain(attrs.aliases.iter().cloned()).collect()
}

/// Calls `read` on each item of every `#[serde(…)]` attribute in `attrs`.
fn each_serde_meta(
    attrs: &[Attribute],
    mut read: impl FnMut(syn::meta::ParseNestedMeta) -> syn::Result<()>,
) -> syn::Result<()> {
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(&mut read)?;
    }
    Ok(())
}

/// The derives read concrete types only: a generic one is refused by name.
fn no_generics(input: &DeriveInput, derive: &str) -> syn::Result<()> {
    if input.generics.params.is_empty() {
        return Ok(());
    }
    Err(Error::new_spanned(&input.generics, format!("{derive} takes no generics")))
}

/// An enum's variants and container attributes, for the two enum derives.
fn enum_input<'a>(
    input: &'a DeriveInput,
    derive: &str,
) -> syn::Result<(&'a syn::DataEnum, Container)> {
    let Data::Enum(data) = &input.data else {
        return Err(Error::new_spanned(input, format!("{derive} is for enums")));
    };
    no_generics(input, derive)?;
    Ok((data, container_attrs(&input.attrs)?))
}

fn container_attrs(attrs: &[Attribute]) -> syn::Result<Container> {
    let mut out = Container::default();
    each_serde_meta(attrs, |meta| {
        if meta.path.is_ident("tag") {
            out.tag = Some(meta.value()?.parse::<LitStr>()?.value());
        } else if meta.path.is_ident("rename_all") {
            let rule = meta.value()?.parse::<LitStr>()?.value();
            if !VARIANT_RULES.contains(&rule.as_str()) {
                return Err(meta.error(format!("rename_all = {rule:?} is not read here")));
            }
            out.rename_all = Some(rule);
        } else if meta.path.is_ident("deny_unknown_fields") {
            out.deny_unknown_fields = true;
        } else if meta.path.is_ident("content") || meta.path.is_ident("untagged") {
            return Err(meta.error("TaggedDeserialize reads internally tagged enums only"));
        } else if meta.input.peek(syn::Token![=]) {
            // Serialize-side or other attributes: skip their value.
            meta.value()?.parse::<syn::Expr>()?;
        }
        Ok(())
    })?;
    Ok(out)
}

fn variant_attrs(attrs: &[Attribute]) -> syn::Result<VariantAttrs> {
    let mut out = VariantAttrs::default();
    each_serde_meta(attrs, |meta| {
        if meta.path.is_ident("rename") {
            out.rename = Some(meta.value()?.parse::<LitStr>()?.value());
        } else if meta.path.is_ident("alias") {
            out.aliases.push(meta.value()?.parse::<LitStr>()?.value());
        } else if meta.path.is_ident("other") {
            out.other = true;
        } else if meta.path.is_ident("skip_deserializing") {
            out.skip = true;
        } else if meta.path.is_ident("skip_serializing") {
            // Serialize's business.
        } else {
            return Err(meta.error("TaggedDeserialize does not read this variant attribute"));
        }
        Ok(())
    })?;
    Ok(out)
}

/// The `rename_all` rules [`renamed`] and [`renamed_field`] follow; any other is a compile
/// error rather than a silent mismatch with serde's `Serialize`.
const VARIANT_RULES: &[&str] =
    &["snake_case", "kebab-case", "SCREAMING_SNAKE_CASE", "lowercase", "UPPERCASE", "camelCase"];
const FIELD_RULES: &[&str] =
    &["snake_case", "lowercase", "camelCase", "kebab-case", "SCREAMING_SNAKE_CASE"];

/// A variant's name as serde's `rename_all` writes it.
fn renamed(variant: &str, rule: Option<&str>) -> String {
    let snake = || {
        let mut out = String::new();
        for (i, c) in variant.char_indices() {
            if c.is_uppercase() && i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        }
        out
    };
    match rule {
        Some("snake_case") => snake(),
        Some("kebab-case") => snake().replace('_', "-"),
        Some("SCREAMING_SNAKE_CASE") => snake().to_uppercase(),
        Some("lowercase") => variant.to_lowercase(),
        Some("UPPERCASE") => variant.to_uppercase(),
        Some("camelCase") => {
            let mut chars = variant.chars();
            chars
                .next()
                .map_or_else(String::new, |first| first.to_lowercase().chain(chars).collect())
        }
        _ => variant.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::renamed;

    #[test]
    fn field_names_follow_serdes_rename_all() {
        use super::renamed_field;
        assert_eq!(renamed_field("run_id", Some("camelCase")), "runId");
        assert_eq!(renamed_field("a_b_c", Some("camelCase")), "aBC");
        assert_eq!(renamed_field("run_id", Some("kebab-case")), "run-id");
        assert_eq!(renamed_field("run_id", Some("snake_case")), "run_id");
    }

    #[test]
    fn variant_names_follow_serdes_rename_all() {
        assert_eq!(renamed("PageState", Some("snake_case")), "page_state");
        assert_eq!(renamed("PageState", Some("kebab-case")), "page-state");
        assert_eq!(renamed("PageState", Some("camelCase")), "pageState");
        assert_eq!(renamed("PageState", Some("lowercase")), "pagestate");
        assert_eq!(renamed("TaskStart", Some("SCREAMING_SNAKE_CASE")), "TASK_START");
        assert_eq!(renamed("TaskStart", Some("UPPERCASE")), "TASKSTART");
        assert_eq!(renamed("PageState", None), "PageState");
    }
}
