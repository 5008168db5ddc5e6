// The function a call names, also in a template that is not instantiated in the translation unit
// under review (a helper instantiated only by other files): there a call with arguments of
// dependent type waits for argument-dependent lookup, and Clang keeps only the functions the name
// found (`MPI_Allreduce(grads.data(), ...)`). When that is one function, the call is taken for a
// call of it; lookup at instantiation can only add overloads from the arguments' namespaces.
#pragma once

#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>

namespace collcheck::lint {

inline const clang::FunctionDecl *calleeOf(const clang::CallExpr *call) {
  if (const clang::FunctionDecl *callee = call->getDirectCallee())
    return callee;
  const auto *lookup =
      llvm::dyn_cast<clang::UnresolvedLookupExpr>(call->getCallee()->IgnoreParenImpCasts());
  if (!lookup || lookup->getNumDecls() != 1)
    return nullptr;
  return llvm::dyn_cast<clang::FunctionDecl>((*lookup->decls_begin())->getUnderlyingDecl());
}

} // namespace collcheck::lint
