// ua-parser-js 1.x ships no types; this is the one call we make (UAParser(ua).getResult()).
declare module 'ua-parser-js' {
  interface Part {
    name?: string;
    version?: string;
    major?: string;
  }
  function UAParser(userAgent: string): { browser: Part; os: Part };
  export default UAParser;
}
