//! The name tables of the PHP check (`php.rs`): which functions, keywords and file names
//! make a call or a path PHP code injection.

/// Functions whose call in a data field is code execution, file access or a PHP probe.
pub(crate) const SINKS: &[&str] = &[
    "system",
    "exec",
    "shell_exec",
    "passthru",
    "popen",
    "proc_open",
    "pcntl_exec",
    "assert",
    "eval",
    "create_function",
    "call_user_func",
    "call_user_func_array",
    "preg_replace",
    "phpinfo",
    "base64_decode",
    "gzinflate",
    "gzuncompress",
    "str_rot13",
    "file_get_contents",
    "file_put_contents",
    "fopen",
    "fwrite",
    "fputs",
    "readfile",
    "file_exists",
    "unlink",
    "highlight_file",
    "show_source",
    "php_uname",
    "phpversion",
    "posix_getpwuid",
    "posix_getuid",
    "posix_geteuid",
    "posix_uname",
    "posix_kill",
    "posix_setuid",
    "scandir",
    "opendir",
    "var_dump",
    "print_r",
    "array_map",
    "array_filter",
    "usort",
    "putenv",
    "ini_set",
    "symlink",
    "move_uploaded_file",
    "getcwd",
    "get_current_user",
    "getmypid",
    "dl",
    "mb_ereg_replace",
    "register_shutdown_function",
    "ob_start",
];

/// Sinks called without arguments in probes (`phpinfo()`).
pub(crate) const NO_ARG: &[&str] =
    &["phpinfo", "getcwd", "php_uname", "phpversion", "posix_getuid", "posix_geteuid", "posix_uname", "get_current_user", "getmypid"];

/// Sinks that are also everyday English words, checked more strictly for bare arguments.
pub(crate) const WORDS: &[&str] = &["system", "exec", "assert", "eval", "dl", "usort"];

/// Functions that build a string argument (`system(base64_decode('aWQ='))`).
pub(crate) const HELPERS: &[&str] = &[
    "base64_decode",
    "str_rot13",
    "gzinflate",
    "gzuncompress",
    "hex2bin",
    "chr",
    "strrev",
    "urldecode",
    "rawurldecode",
    "implode",
    "join",
    "trim",
    "file_get_contents",
    "stripslashes",
    "strtolower",
    "strtoupper",
    "getenv",
    "array_pop",
    "end",
    "current",
    "pack",
    "convert_uudecode",
    "sprintf",
    "md5",
    "sha1",
    "str_replace",
];

/// Names used by webshells dropped on compromised hosts, as `/<name>.php`.
pub(crate) const WEBSHELLS: &[&str] = &[
    "c99",
    "c99shell",
    "c100",
    "r57",
    "r57shell",
    "b374k",
    "wso",
    "wso2",
    "wso25",
    "alfa",
    "alfashell",
    "indoxploit",
    "phpspy",
    "webshell",
    "backdoor",
    "simple-backdoor",
    "k2ll33d",
    "madspot",
    "priv8",
    "shell",
    "cmd",
    "cmdshell",
    "sadrazam",
    "kacak",
    "phpshell",
    "r00t",
    "b374k-shell",
];

/// Vue and jQuery instance helpers (`$t('key')`, `$emit(...)`): JavaScript, not PHP variable
/// functions.
pub(crate) const JS_DOLLAR: &[&str] = &[
    "t",
    "tc",
    "te",
    "d",
    "n",
    "emit",
    "set",
    "delete",
    "watch",
    "on",
    "once",
    "off",
    "nexttick",
    "forceupdate",
    "mount",
    "destroy",
    "el",
    "refs",
    "store",
    "router",
    "route",
    "http",
    "q",
    "j",
];

pub(crate) const SUPERGLOBALS: &[&str] = &["_get", "_post", "_request", "_cookie", "_server", "_files", "_env", "_session", "globals"];

/// For each first letter, a bit per length of the words `php::word_construct` knows (sinks and
/// keywords): most identifiers of a benign field are rejected by one lookup instead of a
/// comparison with every name.
pub(crate) const CANDIDATES: [u32; 26] = {
    let mut table = [0u32; 26];
    let mut k = 0;
    while k < SINKS.len() + KEYWORDS.len() {
        let w = if k < SINKS.len() { SINKS[k] } else { KEYWORDS[k - SINKS.len()] }.as_bytes();
        table[(w[0] - b'a') as usize] |= 1 << w.len();
        k += 1;
    }
    table
};

/// Statements that are not calls but take code or a file (`include 'http://...'`, `echo `id``),
/// and php.ini directives an injection sets.
pub(crate) const KEYWORDS: &[&str] = &[
    "include",
    "include_once",
    "require",
    "require_once",
    "echo",
    "print",
    "die",
    "exit",
    "allow_url_include",
    "auto_prepend_file",
    "auto_append_file",
];

/// PHP-only functions whose output scanners print to confirm that PHP evaluated their input.
pub(crate) const PROBES: &[&str] = &[
    "md5",
    "sha1",
    "crc32",
    "phpversion",
    "php_uname",
    "phpinfo",
    "getcwd",
    "get_current_user",
    "base64_decode",
    "str_rot13",
    "system",
    "shell_exec",
    "passthru",
    "exec",
    "file_get_contents",
    "scandir",
    "implode",
    "strrev",
];
