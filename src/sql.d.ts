// wrangler.toml bundles `*.sql` as text modules (the migrations).
declare module '*.sql' {
  const text: string;
  export default text;
}
