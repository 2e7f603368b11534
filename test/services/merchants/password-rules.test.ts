import { expect } from "chai";
import { passwordProblem } from "../../../services/merchants/members/password-rules.ts";

/** The invite page's password rule (NIST SP 800-63B: length and a common-password list, no composition rules). */
describe("member password rules", () => {
  const email = "jane.doe@example.com";
  it("accepts a long passphrase, whatever its characters", () => {
    for (const ok of ["correct horse battery staple 42", "Tr0ub4dor&3xyzzy", "ünïcødé pässwörd ☕"]) expect(passwordProblem(ok, email), ok).to.equal(undefined);
  });
  it("refuses fewer than 12 characters (counted as characters, not UTF-16 units)", () => {
    expect(passwordProblem("short pass1", email)).to.include("at least 12");
    expect(passwordProblem("☕☕☕☕☕☕☕☕☕☕☕", email)).to.include("at least 12");
  });
  it("refuses listed passwords, listed words with digits or symbols around them, repeats and few distinct characters", () => {
    for (const weak of ["123456789012", "Password1234", "password1234!", "!!iloveyou2024", "qwertyqwerty", "abcabcabcabc", "aaaaaaaaaaab"]) {
      expect(passwordProblem(weak, email), weak).to.be.a("string");
    }
  });
  it("refuses the email's name inside the password", () => {
    expect(passwordProblem("jane.doe-is-the-best", email)).to.include("email");
  });
});
