/// The committed TEST-ONLY keys of `Keys/` (Keys/README.md), built into the binary so that the
/// defaults work from any working directory: `client-secret` without `--key`, and the built-in
/// scenario's `signing_keys.directory` (`Scenario.SigningKeys.defaultDirectory`, `Keys/signing`)
/// when no such directory is there
///. A test fails when these copies differ from the files.
/// Everything here is published with the source: never use these keys to protect anything real.
package enum BuiltInKeys {
    /// `Keys/signing/<kid>.pem`: the RSA-2048 signing keys as (kid, PKCS#8 PEM), in file-name order.
    package static let signing: [(keyID: String, pem: String)] = [
        ("W2ek7HdPaL", """
        -----BEGIN PRIVATE KEY-----
        MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQCbzFM+0RkD+d5Q
        tPe0KiC41f8rpu6I8dxIPa6wpjb+/DpQS3S/6Oe/snR/HiRbbkdjmznIANgvF22N
        QrsAIigSww8MCvHEIoYCLJz6UiHT9zrka9KCQVBMSr/wc6cs8RlPwIf5nZeiJJDS
        Nshwr4plfH6Yy2SxDsuBLCbOX/EpD5jevFqOLt+CMGt5XWUmABTade54Ox43TlYQ
        xax7umfnUmhcy8nM86XRCKivfLs+vDM3z60CoMlUZKiLax/VO+wc8S7F/QTUWmNW
        +FBR7B3BHYJyL3gevhYiWxJVJAhJPKqBMwjAGjOEJbRsXxlXTndVbuDcdV/nCny6
        yaa6nmOVAgMBAAECggEAQG/KME1oJMJYBhZK6suPvBLaFlJVDvPFcWV9llcwoNZu
        Qd5re6IXE6x5zUeIrv4V7ab6R3O99gAhEc87K4t0+omNdCQkqUPEHCsag9erYRE8
        XNQRfUkJLnyuFQOobYiMOPV+56kb2XZ5JVB+J0kbGu1aKNTaoPZnCdZaeHmq8xl4
        nm0/Jow6QUtPbLi058xIzaTPr1GGbDraVEVwzMr/8SGBDEAPbo/hZF3XjTWVqJ+z
        glmfaBS33Vdu+AouKChwJpVEbuyO8g8msGaZQy9uSR6q/53nUD1wRu8tIqQ5GNxg
        IlcjCNq4D3rGXLCV/8Tetepcet1TxISO08oaLWy30wKBgQDK+U5G6aO5MTjdbibx
        8594HjxyDswSZn8jDVY8mlPeUZzYilioOhjfkjd/MsMxIFj4D8Qcl7TgCih3eq6A
        O1UnI36Ze2qcL6q77D5bhgxop4gj9C9cboCW74h6Ge/xF6C2edkSuSmEXAN4pbFY
        wf654KHHz9pM0STgSP+dpQun4wKBgQDEf/Q42M0yjTCTDcj8czekBb106WCi3EIh
        OS/C0g9JRU2mn6RALET0m0IjjQGElQu/2i2YYdqCmm5SD21lT467zbN6CYNU7AK8
        Tsz/616kj99dwyPv05MhdSNfm6cgxkbL1woysvwkKyJJdPb4NpL8U3wXusZo5U0u
        i0pMQjHwJwKBgFCFbJ9HKtNaCpQVkc+kdVwCqroY0q5uCPvP26k5FBJ7T/y7jYZX
        Xey7pdaJPdQsX/8wyf0J1hCXFwynF7j5UMOxGhUrV9TUOChLBUXrvNp7s8+HnI5P
        rCW0qvC9f2mmlPQvDIWX/TdsBViEawGqHDKDQcrx00lsIvPzIazZf/E/AoGAODG3
        cAJgPFKwT32jur5gbSHPGn4bSrfemY23IOndwUB2gm4pFMkUNzenZG9Qvc+5+nW0
        kF17ldoALquGx3BHC2I6L25FBqYv6hZG/fEbscgLQs8pmc5Rx0GuigsDcpYBbQ3k
        NreE7/r95S/z6OwCgPKHDGo3j4vz1Jm097X+fgUCgYBpn4/8orQBWXiCdjXyPFv5
        W6P+Fax9/1yENI9pgnPCIm5ZPFNo/pbsq2GqAzq/LGVNMLN/4TIMV7h9aD7iF1nR
        kqhuMIA9zcoUwp/KTKl/PMcDJSIsmtAsk4v3utK4tH1Hva7SpjNftzTtM4h2Cjh2
        7qvAqWB8t4lCxM93z2ZZtA==
        -----END PRIVATE KEY-----

        """),
        ("Ymq4vB9xTz", """
        -----BEGIN PRIVATE KEY-----
        MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDFny4KKDyjnz+1
        rjvyhH4/1uA37IMQLTbaNjSDj0WIkmZ5Whp7CKw0txNw5IWNNMGP/rNbJ6gpMg5v
        L0qIgB3qGknUfh2VqEX6V0/gIFWl+DlfxV8aNHSoYud6irLxUxxJdqcT2BQLo5XA
        2t+dJWYVuv8lKsXNraZWCEy698gCiu72N5JH2nIDshjNHX5NsEXEvh/VDO34ocb2
        qc/Tvdeyd+qnuDHdskjA1LRu//Td2ngjm0kdVdUtuODzHVvx8Q5WMgm4ZktRZQht
        cGd24xYKNHs//gGx0LxUd3aRyAinrrANhYuCc7Q+v/O9JEyDBvHizJZMGHJKxugW
        +60OVUGnAgMBAAECggEAIq7zN5kkO1tBpTM1FjUmqzGdHHOH9RjaXaXRxZ0piPSY
        w4eKyjkVcBMJeHDC96tgpVMAS2lEXCaK3fygyiAiH+oJNyADNTbZQTx9qkpCfeR4
        vVQ4grLeHodtNNaO3UfG2SXX4OW1bu2A5N4FDOF5byroiK9fE9/8J3FBdjbyhW9p
        VnSjUYrZ0sjIAsQFeT/xxrHTECD8bkqkC60gThRtKV5OTRnAVguBivraoSYIati2
        G8X+7eWs5VcmGd67cFfSuWICfB+y7X+OB37PqPjKmso6A0xeQtBfqLIs3/pEq+TP
        vTDgR4nGbAPfBp/ups/wJPXvMHpq13EMDDm/aJ9hgQKBgQD8CJYigded2D3Nyvo4
        Qb/oT3bDQnuvzsB93GBNXKXWXMo3b1/bLCXVqYEw4Lf6OQ7j+OPm3vOi3S1Hve1a
        VmnOhGkaIJL8oiluT5t5HyXbzl98A9SCthQPJlFwAO/qJbL/58Ju8ENyv4eREybf
        79SwFp0JruazVXEqQP/wxPfI4QKBgQDIu1/2KD/qhh2mrDmdRAodp8Q6kJuOwAB7
        fEfoVLZyidD2Z6mLcnnOsKsJf5Opm9Kin4TM22pelVzqbFJi74rrkng8J3fOxOaA
        c/394gi7jmMRXN8UFDShlTO+2bAs+J/dJq7p/nIBADcdqAKPMLfd42AzIbijc6sK
        rueUK9WzhwKBgQChQ6U9IzOhzhGNskj04i03KlFlkw6taW+FmRMNrTB3vxus6Ni+
        1rrGwhTl/4P42bWLbV/2A8aE+VzVwNM0sII3IEZX72vdtq0n5kwm7iU9RgmWwqSh
        lnuzTeNh9VeNzN2CHPsuHRIrRB4sV8LSGxVOLsoAvibjrNIiJUEfAAlEQQKBgFTt
        chxjyycet0zdcULolp8VbCCbLjWnZozYeFQEA21Sgea+1Sz6si6Q8MyD/aW1F9lW
        RImoC8kYyMcmLXVOhChHQDezOy1wgVW3va69A5TXGXMvJ/MG2X3D8rC8yZ09U+Xt
        h/PYg8OIo8kYXHzYz/JBUWJQ0h3VwngyqCg4o6HhAoGBAM5mMuOVBaDEL2KLaEHW
        XnM8Sb37g3hAJ9MVjPmjZk65ZullKmncBF+eInpGBR4BXCEalBEPC0AZfiEcSNZL
        F0s77OVHAGk28khS9loSXnANSMItKgbxZuAu9gYJ2Uk4lV7obNQH1QkepmsRgp65
        aXnTCWPjRKC2+JbisDZuukTI
        -----END PRIVATE KEY-----

        """),
        ("r8TcNf3QsJ", """
        -----BEGIN PRIVATE KEY-----
        MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDMhdsmQnGpuQHX
        AKBnb7G8cuInYv5ZD3zZKCb8GXO5IGl70rk+OPwZBBnon3ITnRHgimjm6N6dAc6A
        dLzis8TEZ28CUJf8dG2P5zDMHEikoerSEIIWwPdC29Hyykq7DFpQr50+VrpugvLF
        qeeXKPVL1fzRtBhhxwXBQbWenrDHU9PteawON69N6USaq8Dq1FPw/epr3xMgGTN7
        gynYCXu0Or1FCMsKFYhENd8qU48p3OLp90H26nkM/63FCq+XNPurxtXk2W46uszP
        6BQXztsHvUfnPlmNU9JqLGOhkW/U5LNBiDwTBqZyby2rC6+Js2ERw/1qSIzpDiNh
        XEjXBnQrAgMBAAECggEAFuMr4R4yZhHkGNFjIfAn7bTVhh7X49ON3ydVJYUbpC3y
        X/725/WskIga9iNRuswrAfu7PYv1zZA0Mb/em2gOrwP8MkAeogvNbvsqRM0te+76
        vkNGq5EwmnTLC+aDcmcxfDIK4L0H4/IXhPM8jXfx62ipADatO9Pv2u6linirw8J0
        VHeYCnusRY71cJ9d/6bmu7zAB5Xh668fEDfylE04qSbQbojNUFl+KxAg5jX5/0Y9
        aVwDcPtJp8Sl3EpyhlMIo0Z9S0PY01AY3Uhpm40TSErkKtUjT9ZAyY+bva30khMO
        gmaM3sAUBHkkcSZczESYDnvUTnhE6B/KYwPn+DA3QQKBgQD7wsgGQJanEBSaVmRx
        u91fin41OP1gUqm5MnoW8N7zBq/F+YiN11+nP+qqsJvAUlV6gJBmUgV0dbCJa3WG
        dwWN7UrIE5meKmj8LT6Kto9yFQWuNCSHQ0KQ0oNPX/+TZ6JD7FUzwjQXYeAmps0S
        t1VrYmXILpt76OhOFahjXl9tmwKBgQDP93RnqwMpShMcohPWGBrTE+3y5pSS2AKv
        S6crd9K/MBv6zuneofZd9eb03XLTnYHMiS+tvjX6ONfYtgC2VABFqUrRFvOTN5dp
        RAXL+0xviFFhO0IZC2Q9nqC53+nikbbcU/m+D3INVcWEvMyKt+34Xr1DmpmcVM4h
        tifRx/PEsQKBgB+mch0PG6FvDRgGCmSd+IudTpaETp5AZiPpK54cs/qbeZeK8lba
        n6TYDTleMIZyE1ruNLkYUKU+cm4kO0cnSWR5U3BpvmM6863YRkeMAeaWq/slhP4Y
        P5MTU/yzld7DJYwiduel34SdAl/5kkhrEesJGMCc02E1e5btdBjh8V9HAoGBAMTu
        44A35Op4htiacoZOlThEqxNVXmQfwYsV7NuwwBTkDdrXjYeRf6dCcM531YCmqn9x
        eYDhmmO06FEDKHF/4jIVOg/91/IUtoCsNYEQGzWStN2KK/FjZC0lxbW+X9B5g9vo
        eZqNLceK7VvhHSBPRD3qGPenssbjV798qwBwhFpBAoGADZTYms6NWTEHt7Nagb51
        EgvvdDxa2k8MeJ51QtG6loCkn1fawGNzCk+TxSe7Gv2a24oj7fzeeCTnHgknSJ6O
        X+qIBZGmKC6nkzwCQu4upHHma/8Yh3OWn+Z1B1IL/C1TSrxRLyv/qFY3tfPlNSLw
        kwrSCix1oP6yOCRF7nfgmmk=
        -----END PRIVATE KEY-----

        """),
    ]

    /// The developer key id whose private key is built in.
    package static let developerKeyID = "MOCKKEY001"

    /// `Keys/AuthKey_MOCKKEY001.p8`: the default team's P-256 developer key, PKCS#8 PEM.
    package static let developerKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgnDgmIArSlsUNkb9l
        7atgxvhOaT+pFkwjLLD0bu0a1A+hRANCAARkzO7AGxv21KAm7TfEuwXRkJqSTVsV
        AyPtxydDL2L0yoxuuty4ciWXk2DhFiBZ4bwnBuHeQrgYY6GpKcMx/LsD
        -----END PRIVATE KEY-----

        """

    /// The developer key's private PEM when `keyID` is the built-in one.
    package static func developerKey(_ keyID: String) -> String? {
        keyID == developerKeyID ? developerKeyPEM : nil
    }
}
